/**
 * What the lifecycle tools share to start a process in tmux (registered in lifecycle.ts): the
 * new process's environment and command as tmux takes them, and the creating step itself —
 * `-P -F` for the new ids from tmux, the owner mark, and what a step cut short or cancelled
 * after tmux had the line leaves behind — with the notes on where and how the process started.
 *
 * @module
 */

import { markOwned } from "../mcp/ownership.ts";
import { z } from "zod";
import type { TmuxContext } from "../mcp/context.ts";
import { type ActCheck, runIf } from "../mcp/act_step.ts";
import { changeView, type ViewScope } from "../mcp/view_guard.ts";
import { argvCommands } from "../tmux/control.ts";
import { TmuxError } from "../tmux/tmux_error.ts";
import type { Snapshot } from "../tmux/snapshot.ts";
import { newGuard, parseRecords, recordFormat } from "../tmux/format.ts";
import { clip, ToolFailure } from "../mcp/errors.ts";
import { envNameSchema, literalArg, passableString, plural, type Started } from "./arguments.ts";
import { type Reach, removedFrom } from "./kill_reach.ts";
import { createSizeSafe, sizeSafe } from "./window_size.ts";

/**
 * Environment variables for the new process (`-e NAME=VALUE`): tmux takes each as it is, never
 * as a format, so a value holding `#(...)` stays text.
 */
export const environmentSchema = z.record(
  // Checked on every call, not listed: a model knows what a variable name looks like.
  z.string().refine((name) => envNameSchema.safeParse(name).success, {
    message:
      "an environment variable name (letters, digits, underscore; not starting with a digit)",
  }),
  passableString(65_536, 0),
).optional();

/** The `-e` arguments for {@link environmentSchema}. */
export function environmentArgs(environment: Record<string, string> | undefined): string[] {
  return Object.entries(environment ?? {}).flatMap(([key, value]) => [
    "-e",
    literalArg(`${key}=${value}`),
  ]);
}

/** What a creation makes, for its messages, and the tool that lists such things. */
type Made = "session" | "window" | "pane";
const LISTED_BY: Record<Made, string> = {
  session: "list_sessions",
  window: "list_windows",
  pane: "list_panes",
};

/**
 * Runs a creating command with `-P -F` and returns the fields it printed for the new thing
 * (`made`), marked as this server's. With `view`, the creation changes what a person could see
 * (a new current window, a split of a shown window): it is guarded like any view change
 * ({@link changeView}), with its `checks` (facts tmux checks in the same step, first). With `windowSize` (the global `window-size`, or null for a server not
 * yet started), it makes a new window or session, which the person's configuration may turn
 * into a crash ({@link sizeSafe}); the value lent out is given back if the step did not answer
 * ({@link createSizeSafe}).
 *
 * Once tmux has the command line, the call's cancellation no longer stops it: tmux makes the
 * pane and starts its process first, then runs a person's after-hooks (a plugin's slow
 * `run-shell`), and a step cut short there would leave a pane running that nobody was told of
 * and no owner mark set (under `--own-panes-only`, one its maker could never touch). A step
 * that outlives its timeout is killed, but tmux printed the new ids before the hooks ran: what
 * it made is marked all the same, and the failure names it, so that nobody creates it twice.
 */
export async function created(
  ctx: TmuxContext,
  made: Made,
  args: string[],
  fields: readonly string[],
  tail: string[],
  view?: { snapshot: Snapshot; scope: ViewScope; what: string; checks?: readonly ActCheck[] },
  windowSize?: string | null,
): Promise<string[]> {
  const guard = newGuard();
  // The new pane's id comes last, for its owner mark (ownership.ts).
  const all = [...fields, "#{pane_id}"];
  const one = argvCommands([...args, "-P", "-F", recordFormat(guard, all), ...tail]);
  const commands = windowSize === undefined ? one : sizeSafe(ctx.runner, one, windowSize);
  // Spawned, not sent over the control connection: without -c tmux starts a new session or
  // window in the directory of the client that asks, and a control client is attached to a
  // session, whose directory tmux would take instead of this server's; and a tmux process of
  // its own prints the new ids even when the step is killed afterwards. Made only on the
  // server the call read (runIf), which a tmux process of its own may not reach.
  let out: Uint8Array;
  try {
    out = await createSizeSafe(ctx, windowSize, async (stop) => {
      const run = { signal: stop, untilStarted: ctx.signal };
      return view
        ? await changeView(ctx, view.snapshot, view.scope, view.what, commands, run, view.checks)
        : (await runIf(ctx, [], commands, [], { spawn: run })).stdout;
    });
  } catch (error) {
    if (!(error instanceof TmuxError) || !["timeout", "cancelled"].includes(error.kind)) {
      throw error;
    }
    const [record] = parseRecords(error.stdout, guard, all.length);
    // Cancelled with no ids printed: stopped before tmux had the line, or at the process's end.
    if (!record && error.kind === "cancelled") throw error;
    if (!record) {
      throw new ToolFailure(
        `tmux may have made the ${made} (${error.message.replace(/\.$/, "")}; it printed no ` +
          "ids before that).",
        `Look with ${LISTED_BY[made]} before trying again: a retry could start its process twice.`,
      );
    }
    const marked = await markOwned(ctx, [record[fields.length]]);
    throw new ToolFailure(
      `tmux made the ${made} (${idsOf(fields, record)}) and started its process, but its step ` +
        `did not end (${error.message.replace(/\.$/, "")}): a hook of the person's after it ` +
        `may still be running.${marked ? " It is marked as this server's." : ""}`,
      `Do not make it again (its process would start twice): ${LISTED_BY[made]} shows it.`,
    );
  }
  const [record] = parseRecords(out, guard, all.length);
  if (!record) throw new ToolFailure("tmux created nothing and printed no ids.");
  const marked = await markOwned(ctx, [record[fields.length]]);
  if (ctx.signal?.aborted) {
    // Nobody reads the reply to a cancelled call; the log may be read.
    const message = `The call was cancelled after tmux had made the ${made} (${
      idsOf(fields, record)
    })${marked ? ", which is marked as this server's" : ""}.`;
    ctx.log("warning", message);
    throw new ToolFailure(message, `${LISTED_BY[made]} shows it.`);
  }
  return record.slice(0, fields.length);
}

/** The ids among a creation's printed fields, named: "window @3, pane %5". */
function idsOf(fields: readonly string[], record: readonly string[]): string {
  const names: Record<string, string> = {
    "#{session_id}": "session",
    "#{window_id}": "window",
    "#{pane_id}": "pane",
  };
  return fields.flatMap((f, i) => names[f] ? [`${names[f]} ${record[i]}`] : []).join(", ");
}

/**
 * With the note that a pane's process ended at once, for a `command`: which shell ran it. tmux
 * runs a command with its default-shell's `-c` (the person's fish, say), not `/bin/sh`, and a
 * command written for another shell may fail at once in it.
 */
export function noteShell(
  started: { readonly notes: string[]; readonly ended: boolean },
  command: string | undefined,
  shell: string,
): void {
  if (command === undefined || !started.ended) return;
  started.notes.push(
    `tmux ran the command as ${JSON.stringify(shell)} -c (its default-shell option).`,
  );
}

/**
 * The note for a name tmux no longer holds once the creating step is over: renamed right
 * after it was made (a person's after-hook), where the reply gives the name it holds now.
 */
export function noteRenamed(notes: string[], what: string, before: string, now: string): void {
  if (now === before) return;
  notes.push(
    `The ${what} is named ${JSON.stringify(now)} now, not ${JSON.stringify(before)}: it was ` +
      "renamed right after it was made (a hook in the person's tmux configuration, say).",
  );
}

/** The trailing shell command argument, behind `--` so a leading `-` is no flag. */
export function commandTail(command: string | undefined): string[] {
  return command === undefined ? [] : ["--", literalArg(command)];
}

/** Sessions a note names by name; a window linked into a large group can end many. */
const MAX_NAMED_SESSIONS = 5;

/**
 * What went with a pane whose process took it at once (a new one, or one respawned), as
 * kill_pane would list it: its window (it was the last pane there), the sessions that window
 * was the last of, the server (its last session). `reach` is what the pane's end could take,
 * `before` whether a server ran then. Null when only the pane went.
 */
export async function wentWithPane(
  ctx: TmuxContext,
  before: { readonly running: boolean },
  reach: Reach,
): Promise<string | null> {
  const { removed, serverStopped, counts } = await removedFrom(ctx, before, reach);
  const named = removed.sessions.slice(0, MAX_NAMED_SESSIONS);
  const things = [
    ...removed.windows.map((id) => `window ${id}`),
    ...named.map((s) => `session ${s.id} ${JSON.stringify(clip(s.name, 100))}`),
    ...counts.sessions > named.length
      ? [plural(counts.sessions - named.length, "more session")]
      : [],
  ];
  if (things.length === 0) return null;
  return `With it went ${things.join(", ")}${
    serverStopped ? "; the tmux server exited (no session left)" : ""
  }.`;
}

/**
 * The summary of a creation (`made`: "Created window @3 ... with pane %5"). When the new pane's
 * process has ended already it says so, first thing after, and what went with a pane it took
 * (`went`): the ids it names may be gone, and the reply must not read as a plain success.
 */
export function madeSummary(made: string, started: Started, went: string | null): string {
  if (!started.ended) return `${made}.`;
  const why = started.notes[0] ?? "its process has already ended.";
  return `${made}, but ${why[0].toLowerCase()}${why.slice(1)}${went === null ? "" : ` ${went}`}`;
}

/**
 * {@link wentWithPane} for a new pane (`paneId` in window `windowId`, placed in `sessions`, by
 * id and name) that startedIn found gone, its note added to the started notes; null
 * otherwise.
 */
export async function wentWithNew(
  ctx: TmuxContext,
  started: Started,
  ids: { readonly paneId: string; readonly windowId: string },
  sessions: ReadonlyMap<string, string>,
): Promise<string | null> {
  if (started.fields !== null) return null;
  // The creating step ran on a server: what ended since, the server too, counts.
  const went = await wentWithPane(ctx, { running: true }, {
    panes: new Set([ids.paneId]),
    windows: new Set([ids.windowId]),
    sessions: new Set(sessions.keys()),
    names: sessions,
  });
  if (went !== null) started.notes.push(went);
  return went;
}
