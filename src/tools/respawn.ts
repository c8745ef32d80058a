/**
 * respawn_pane: restarting a pane's process, guarded as typing into it is (send_keys), and
 * refused where the new process's end at once could unzoom a person's window or take tmux 3.3a
 * down (src/mcp/lone_links.ts), or where its window synchronizes its panes and a person's status
 * line lists it: what they type there would reach the new process (pane_modes.ts
 * syncedArrival). Registered in lifecycle.ts.
 *
 * @module
 */

import { z } from "zod";
import type { TmuxContext } from "../mcp/context.ts";
import { ToolFailure } from "../mcp/errors.ts";
import { guardUnzoom } from "../mcp/destroy_guard.ts";
import { allOf } from "../mcp/act_step.ts";
import { guardView } from "../mcp/view_guard.ts";
import { deliverInput, guardInput, type InputGuardOptions } from "../mcp/input_guard.ts";
import { windowUnwatched } from "../mcp/unwatched.ts";
import { respawnFormat, respawnRefusal } from "../mcp/lone_links.ts";
import { argvCommands, withPlaceResets } from "../tmux/control.ts";
import type { PaneRow, Snapshot } from "../tmux/snapshot.ts";
import { defineTool } from "../mcp/tool_spec.ts";
import { flag, int, paneIdSchema } from "../mcp/schemas.ts";
import {
  changes,
  checkStartDirectory,
  commandSchema,
  formatArg,
  GONE,
  notesField,
  paneFields,
  startDirectorySchema,
  startedIn,
} from "./arguments.ts";
import { reachOfPane } from "./kill_reach.ts";
import { commandTail, environmentArgs, environmentSchema, wentWithPane } from "./creating.ts";
import { syncedArrival } from "./pane_modes.ts";

const KEEP_ZOOM_HINT = "Ask the person, or use a pane nobody watches (create_window); tmux-mcp " +
  "started with --allow-attended-input lifts this.";

/**
 * Refuses to respawn a pane a person's zoom hides (on another pane of its window), as kill_pane
 * refuses to kill it ({@link guardUnzoom}): whether the new process outlives the step is not
 * known before it, and one that ends at once takes its pane with it unless remain-on-exit is on
 * (off, or `failed` and it succeeded), and tmux unzooms a window when any of its panes goes.
 * With kill or without: a dead pane's remain-on-exit may have changed since it died. What lifts
 * it is the permission typing where a person watches needs (`--allow-attended-input`); `force`
 * lifts only the caller's own pane.
 */
async function guardKeepsZoom(ctx: TmuxContext, paneId: string): Promise<void> {
  if (ctx.config.allowAttendedInput) return;
  const now = await paneFields(ctx, paneId, [
    "#{window_id}",
    "#{window_zoomed_flag}",
    "#{pane_active}",
    "#{remain-on-exit}",
  ]);
  if (now === null) return;
  const [windowId, zoomed, active, remain] = now;
  if (zoomed !== "1" || active === "1" || remain === "on") return;
  const snapshot = await ctx.snapshot({
    sessions: false,
    windows: false,
    windowId,
    processInfo: false,
  });
  const pane = snapshot.panes.find((p) => p.id === paneId);
  if (!pane) return;
  // One of tmux's own words for the option (on, off, failed): no text of anyone's.
  const what = `Respawning ${paneId}, should its new process end at once (remain-on-exit is ` +
    `${remain}),`;
  guardUnzoom(ctx, snapshot, pane, what, false, KEEP_ZOOM_HINT);
}

/**
 * {@link guardKeepsZoom} as tmux checks it at the instant of the respawn, with the pane's other
 * facts: kill_pane's check (no person shows the pane's window), unless remain-on-exit is on
 * then. A person who shows the window unzoomed sees the pane itself, which the input guards
 * refuse already.
 */
function keepsZoom(
  ctx: TmuxContext,
  snapshot: Snapshot,
  paneId: string,
): InputGuardOptions["claim"] {
  if (ctx.config.allowAttendedInput) return undefined;
  return {
    format: `#{||:#{==:#{remain-on-exit},on},${windowUnwatched(snapshot, paneId).format}}`,
    refusal: async () => {
      try {
        await guardKeepsZoom(ctx, paneId);
      } catch (error) {
        if (error instanceof ToolFailure) return error;
        throw error;
      }
      return null;
    },
  };
}

/**
 * `zoom` (the claim of {@link keepsZoom}) with the check that the new process's end cannot take
 * tmux 3.3a down: a pane whose end ends a window linked twice into a session that holds nothing
 * else does (src/mcp/lone_links.ts). Unlike the zoom, no permission lifts it.
 */
function endsSafely(
  ctx: TmuxContext,
  pane: PaneRow,
  zoom: InputGuardOptions["claim"],
): NonNullable<InputGuardOptions["claim"]> {
  const safe = respawnFormat(pane.windowId);
  return {
    format: zoom ? `#{&&:${safe},${zoom.format}}` : safe,
    refusal: async () =>
      await respawnRefusal(ctx, pane.id, pane.windowId) ?? await zoom?.refusal() ?? null,
  };
}

/**
 * `claim` with the check of {@link syncedArrival} (`synced`): that at the instant of the respawn
 * no pane of the pane's window has synchronize-panes on, or no person is attached to a session
 * that lists it. Its refusal when that check is what fails, asked of tmux as it is then.
 */
function staysUnsynced(
  ctx: TmuxContext,
  paneId: string,
  synced: ReturnType<typeof syncedArrival>,
  claim: NonNullable<InputGuardOptions["claim"]>,
): NonNullable<InputGuardOptions["claim"]> {
  if (synced === null) return claim;
  const { condition, refusal } = synced.check;
  return {
    format: allOf([claim.format, condition.format]),
    refusal: async () => {
      const taken = await claim.refusal();
      if (taken) return taken;
      const now = await paneFields(ctx, paneId, [condition.format]);
      return now !== null && now[0] !== "1" ? refusal : null;
    },
  };
}

/** respawn_pane. */
export const respawnPane = defineTool({
  name: "respawn_pane",
  title: "Respawn pane",
  toolset: "execute",
  description: "Restart a pane's process (a live one only with kill). Guarded as send_keys.",
  input: {
    paneId: paneIdSchema,
    command: commandSchema.optional(),
    startDirectory: startDirectorySchema.optional(),
    environment: environmentSchema,
    kill: flag(),
    force: flag(),
  },
  output: {
    paneId: paneIdSchema,
    gone: z.boolean().describe("The new process exited at once and took the pane with it."),
    pid: int().nullable().describe("Process id of the new process (null when gone)."),
    command: z.string().describe("What tmux reports running in the pane now."),
    dead: z.boolean().describe("Whether the new process already exited."),
    cwd: z.string(),
    notes: notesField,
  },
  annotations: changes({ destructive: true, idempotent: false }),
  async run(args, ctx) {
    checkStartDirectory(args.startDirectory);
    const snapshot = await ctx.guardSnapshot(args.paneId);
    const pane = ctx.pane(snapshot, args.paneId);
    // A window with synchronize-panes on copies what a person types there to the new process
    // too, whatever it runs (tmux's default command, the pane's first one, included): refused
    // where their status line lists that window, not only where they are shown it, and checked
    // again by tmux at the respawn (pane_modes.ts syncedArrival).
    const synced = syncedArrival(
      ctx,
      snapshot,
      pane,
      `Respawning ${pane.id} with a new program in window ${pane.windowId}`,
    );
    const guard = {
      force: args.force,
      allowDead: true,
      allowInputOff: true,
      allowRelay: true,
      claim: staysUnsynced(
        ctx,
        pane.id,
        synced,
        endsSafely(ctx, pane, keepsZoom(ctx, snapshot, pane.id)),
      ),
    };
    guardInput(ctx, snapshot, pane, guard);
    if (synced?.listedWindowsOf.length) {
      guardView(ctx, snapshot, { listedWindowsOf: synced.listedWindowsOf }, synced.what);
    }
    if (!pane.dead && !args.kill) {
      throw new ToolFailure(
        `Pane ${pane.id} is still running ${JSON.stringify(pane.command)} (pid ${pane.pid}).`,
        "Pass kill: true to kill it and start again, or send_keys to talk to it.",
      );
    }
    if (pane.windowZoomed && !pane.active) await guardKeepsZoom(ctx, pane.id);
    // Only a window linked twice into one session can be such a window: asked of tmux then.
    const sessions = pane.placements.map((p) => p.sessionId);
    if (new Set(sessions).size < sessions.length) {
      const refusal = await respawnRefusal(ctx, pane.id, pane.windowId);
      if (refusal) throw refusal;
    }
    const argv = ["respawn-pane", "-t", pane.id];
    if (args.kill) argv.push("-k");
    if (args.startDirectory !== undefined) argv.push("-c", formatArg(args.startDirectory));
    argv.push(...environmentArgs(args.environment));
    // No control client may hold a stale place in the pane's output as it respawns: tmux 3.3a
    // crashes at the new program's first output otherwise (tmux/tmux#5499). Every such client
    // stays attached, its place in the pane's output moved up on the same line, right before.
    await withPlaceResets(ctx.runner, ctx.address, pane.id, (resets) =>
      deliverInput(
        ctx,
        snapshot,
        pane,
        guard,
        argvCommands([...argv, ...commandTail(args.command)]),
        resets,
      ));
    const { cwd, notes } = await startedIn(ctx, pane.id, args.startDirectory);
    const now = await paneFields(
      ctx,
      pane.id,
      ["#{pane_pid}", "#{pane_current_command}", "#{pane_dead}"],
    );
    if (now === null) {
      const went = await wentWithPane(ctx, snapshot, reachOfPane(pane));
      if (went !== null) notes.push(went);
      return {
        data: { paneId: pane.id, gone: true, pid: null, command: "", dead: true, cwd, notes },
        summary: went === null ? GONE(pane.id) : `${GONE(pane.id)} ${went}`,
      };
    }
    const [pid, command, dead] = now;
    return {
      data: {
        paneId: pane.id,
        gone: false,
        pid: Number(pid),
        command,
        dead: dead === "1",
        cwd,
        notes,
      },
      summary: `Respawned ${pane.id}: pid ${pid} running ${JSON.stringify(command)}${
        dead === "1" ? " (already exited)" : ""
      }.`,
    };
  },
});
