/**
 * Where an option or hook lives: a tool's scope, target and global turned into the flags
 * tmux's show-/set-options and -hooks take, refusing what tmux would silently read some other
 * way; and a name tmux does not know, refused as such rather than passed on as tmux's error.
 * Shared by the option tools of settings.ts and the hook tools of hooks.ts.
 *
 * @module
 */

import { z } from "zod";
import type { TmuxContext } from "../mcp/context.ts";
import { ToolFailure } from "../mcp/errors.ts";
import { TmuxError } from "../tmux/tmux_error.ts";
import { SESSIONS_ONLY, type Snapshot } from "../tmux/snapshot.ts";

const SCOPES = ["server", "session", "window", "pane"] as const;
/** The scope a tool names: server, session, window or pane. */
export type Scope = typeof SCOPES[number];

/** Where an option or hook lives in tmux, as flags for show-/set-options and -hooks. */
export interface ScopeFlags {
  readonly flags: string[];
  /** What it is, for messages: "global session options", "window @2"... */
  readonly label: string;
  /** The resolved target id, or null for global and server scopes. */
  readonly targetId: string | null;
  /** The read that found the target (its clients say who watches it), when there is one. */
  readonly snapshot?: Snapshot;
}

/**
 * Turns scope, target and global into tmux flags, refusing what tmux would silently read
 * some other way: a missing target (tmux would pick a "best" session on its own), a target
 * with global (tmux ignores the target), a target that does not exist (looked up in a read of
 * what the scope names: the sessions, the windows, or that pane).
 */
export async function scopeFlags(
  ctx: TmuxContext,
  scope: Scope,
  target: string | null | undefined,
  global: boolean,
  what: "options" | "hooks",
): Promise<ScopeFlags> {
  const hasTarget = target !== undefined && target !== null;
  if (scope === "server") {
    if (hasTarget) {
      throw new ToolFailure(
        `Server ${what} have no target; got ${JSON.stringify(target)}.`,
        `Drop target, or choose scope session, window or pane.`,
      );
    }
    return what === "options"
      ? { flags: ["-s"], label: "server options", targetId: null }
      : { flags: ["-g"], label: "global hooks", targetId: null };
  }
  if (global && hasTarget) {
    throw new ToolFailure(
      `Global ${what} have no target, and tmux would ignore ${JSON.stringify(target)}.`,
      `Drop target to read the global ${what}, or drop global for the ${scope}'s own.`,
    );
  }
  if (global) {
    return scope === "session"
      ? { flags: ["-g"], label: `global session ${what}`, targetId: null }
      : { flags: ["-g", "-w"], label: `global window ${what}`, targetId: null };
  }
  if (!hasTarget) {
    throw new ToolFailure(
      `Which ${scope}? ${scope[0].toUpperCase()}${scope.slice(1)} ${what} need a target.`,
      `Pass target (${
        scope === "session" ? "a session id or name" : scope === "window" ? "@N" : "%N"
      }), or global: true for the global ${what}.`,
    );
  }
  switch (scope) {
    case "session": {
      const snapshot = await ctx.snapshot(SESSIONS_ONLY);
      const s = ctx.session(snapshot, target);
      return { flags: ["-t", s.id], label: `session ${s.id}`, targetId: s.id, snapshot };
    }
    case "window": {
      const { snapshot, window: w } = await ctx.windowAlone(target);
      return { flags: ["-w", "-t", w.id], label: `window ${w.id}`, targetId: w.id, snapshot };
    }
    case "pane": {
      const { snapshot, pane: p } = await ctx.paneSnapshot(target);
      return { flags: ["-p", "-t", p.id], label: `pane ${p.id}`, targetId: p.id, snapshot };
    }
  }
}

/** The scope argument of the option and hook tools. */
export const scopeSchema = z.enum(SCOPES);

/** Whether tmux refused a name it does not know (it says "invalid option" for hooks too). */
export function unknownName(error: unknown): error is TmuxError {
  return error instanceof TmuxError && /^(invalid|unknown|ambiguous) option/.test(error.message);
}
/** The refusal of a name tmux does not know, saying which tool lists the names it does. */
export function noSuch(
  kind: "option" | "hook",
  name: string | undefined,
  error: TmuxError,
): ToolFailure {
  return new ToolFailure(
    `tmux has no ${kind} ${JSON.stringify(name)} (${error.message}).`,
    kind === "option"
      ? "show_options lists the options of a scope."
      : "show_hooks lists the hooks tmux knows.",
  );
}

/** Runs a command that names an option or hook, refusing a name tmux does not know. */
export async function runNamed(
  ctx: TmuxContext,
  argv: string[],
  kind: "option" | "hook",
  name: string | undefined,
): Promise<Uint8Array> {
  try {
    return await ctx.run(argv);
  } catch (error) {
    throw unknownName(error) ? noSuch(kind, name, error) : error;
  }
}
