/**
 * Names and titles: rename_session, rename_window and set_pane_title (registered with the
 * arranging tools, layout.ts). Each refuses up front a name tmux would store as something else,
 * and answers with the name read back from tmux (arguments.ts).
 *
 * @module
 */

import { z } from "zod";
import { ToolFailure } from "../mcp/errors.ts";
import { defineTool } from "../mcp/tool_spec.ts";
import {
  paneIdSchema,
  sessionIdSchema,
  sessionRefSchema,
  windowIdArg,
  windowIdSchema,
} from "../mcp/schemas.ts";
import { SESSIONS_ONLY } from "../tmux/snapshot.ts";
import { checkNames, formatArg, nameSchema, renameChecked, requireStored } from "./arguments.ts";
import { ARRANGES } from "./arranging.ts";

/** rename_session. */
export const renameSession = defineTool({
  name: "rename_session",
  title: "Rename session",
  toolset: "manage",
  description: "Rename a session; names tmux would rewrite are refused.",
  input: {
    session: sessionRefSchema,
    name: nameSchema,
  },
  output: { sessionId: sessionIdSchema, name: z.string(), previousName: z.string() },
  annotations: ARRANGES,
  async run(args, ctx) {
    await checkNames(ctx, [["session name", args.name]]);
    const snapshot = await ctx.snapshot(SESSIONS_ONLY);
    const session = ctx.session(snapshot, args.session);
    const clash = snapshot.sessions.find((s) => s.name === args.name && s.id !== session.id);
    if (clash) {
      throw new ToolFailure(
        `Another session, ${clash.id}, is already named ${JSON.stringify(args.name)}.`,
        "Choose another name (list_sessions lists the names in use).",
      );
    }
    const name = await renameChecked(
      "session name",
      args.name,
      session.name,
      async (name) => {
        await ctx.run(["rename-session", "-t", session.id, "--", formatArg(name)]);
        return ctx.session(await ctx.snapshot(SESSIONS_ONLY), session.id).name;
      },
      "rename_session again with a plainer name.",
    );
    return {
      data: { sessionId: session.id, name, previousName: session.name },
      summary: `Session ${session.id} is now named ${JSON.stringify(name)}.`,
    };
  },
});

/** rename_window. */
export const renameWindow = defineTool({
  name: "rename_window",
  title: "Rename window",
  toolset: "manage",
  description: "Rename a window; names tmux would rewrite are refused.",
  input: {
    windowId: windowIdArg,
    name: nameSchema,
  },
  output: {
    windowId: windowIdSchema,
    name: z.string(),
    previousName: z.string(),
  },
  annotations: ARRANGES,
  async run(args, ctx) {
    await checkNames(ctx, [["window name", args.name]]);
    const { window } = await ctx.windowAlone(args.windowId);
    const name = await renameChecked(
      "window name",
      args.name,
      window.name,
      async (name) => {
        await ctx.run(["rename-window", "-t", window.id, "--", formatArg(name)]);
        return (await ctx.windowAlone(window.id)).window.name;
      },
      "rename_window again with a plainer name.",
    );
    return {
      data: { windowId: window.id, name, previousName: window.name },
      // tmux's rename-window turns the window's automatic-rename off: the name no longer
      // follows its program, which a person who relied on that would otherwise not learn.
      summary: `Window ${window.id} is now named ${JSON.stringify(name)}; tmux keeps that name ` +
        "(its automatic-rename is off now).",
    };
  },
});

/** set_pane_title. */
export const setPaneTitle = defineTool({
  name: "set_pane_title",
  title: "Set pane title",
  toolset: "manage",
  description: "Set a pane's title, exactly.",
  input: {
    paneId: paneIdSchema,
    title: nameSchema,
  },
  output: { paneId: paneIdSchema, title: z.string() },
  annotations: ARRANGES,
  async run(args, ctx) {
    await checkNames(ctx, [["pane title", args.title]]);
    const { pane } = await ctx.paneSnapshot(args.paneId);
    await ctx.run(["select-pane", "-t", pane.id, "-T", formatArg(args.title)]);
    const { pane: now } = await ctx.paneSnapshot(pane.id);
    requireStored(
      "pane title",
      now.title,
      args.title,
      "The program in the pane may have set its own title; try again or choose plainer text.",
    );
    return {
      data: { paneId: pane.id, title: now.title },
      summary: `Pane ${pane.id} is titled ${JSON.stringify(now.title)}.`,
    };
  },
});
