/**
 * Lifecycle: starting new processes in tmux — sessions, windows, split panes — and restarting
 * a pane's process. Toolset execute: each of these starts a program.
 *
 * New windows and panes are created without taking the focus (`-d`) unless the caller asks,
 * so a person watching a session does not see their view switch under them. Every tool
 * returns the new ids from tmux itself (`-P -F`), and where the process really started.
 *
 * @module
 */

import { markOwned } from "../mcp/ownership.ts";
import { z } from "zod";
import type { TmuxContext } from "../mcp/context.ts";
import { clip, ToolFailure } from "../mcp/errors.ts";
import { runIf } from "../mcp/act_step.ts";
import { guardUnzoom } from "../mcp/destroy_guard.ts";
import { deliverInput, guardInput, type InputGuardOptions } from "../mcp/input_guard.ts";
import { windowUnwatched } from "../mcp/unwatched.ts";
import { changeView, type ViewScope } from "../mcp/view_guard.ts";
import { respawnFormat, respawnRefusal } from "../mcp/lone_links.ts";
import { argvCommands } from "../tmux/control.ts";
import { TmuxError } from "../tmux/tmux_error.ts";
import { type PaneRow, SESSIONS_ONLY, type Snapshot } from "../tmux/snapshot.ts";
import { defineTool, type ToolAnnotations, type ToolRegistry } from "../mcp/registry.ts";
import {
  checkedString,
  count,
  flag,
  int,
  paneIdSchema,
  sessionIdSchema,
  sessionRefSchema,
  windowIdSchema,
} from "../mcp/schemas.ts";
import { chainArgv, decodeBytes, newGuard, parseRecords, recordFormat } from "../tmux/format.ts";
import {
  changes,
  checkNames,
  checkStartDirectory,
  commandSchema,
  envNameSchema,
  formatArg,
  GONE,
  literalArg,
  nameSchema,
  notesField,
  paneFields,
  plural,
  reportedDirectoryArg,
  startDirectorySchema,
  startedIn,
} from "./arguments.ts";
import { createSizeSafe, personsWindowSize, sizeSafe, WINDOW_OPTIONS_READ } from "./window_size.ts";
import { checkWindowCells } from "./tmux_limits.ts";
import { reachOfPane, removedFrom } from "./teardown.ts";

/** Starting something new changes the server but destroys nothing, and repeats make more. */
const CREATES: ToolAnnotations = changes({ destructive: false, idempotent: false });

/** A size as tmux takes it: cells, or a percentage of the available space. */
export const sizeSchema = z.union([
  z.number().int().min(1).max(10_000),
  z.string().regex(/^[1-9]\d?%$/, "a percentage from 1% to 99%"),
]);

/**
 * Environment variables for the new process (`-e NAME=VALUE`): tmux takes each as it is, never
 * as a format, so a value holding `#(...)` stays text.
 */
const environmentSchema = z.record(
  // Checked on every call, not listed: a model knows what a variable name looks like.
  z.string().refine((name) => envNameSchema.safeParse(name).success, {
    message:
      "an environment variable name (letters, digits, underscore; not starting with a digit)",
  }),
  checkedString(65_536, 0),
).optional();

/** The `-e` arguments for {@link environmentSchema}. */
function environmentArgs(environment: Record<string, string> | undefined): string[] {
  return Object.entries(environment ?? {}).flatMap(([key, value]) => [
    "-e",
    literalArg(`${key}=${value}`),
  ]);
}

// ---------------------------------------------------------------------------------------------
// What the person's configuration makes of a new window or session

/**
 * The global options that decide whether a new window or session can be made safely, read in
 * one step: the global `window-size` with the mark of a lend (see {@link sizeSafe}),
 * `destroy-unattached` (a new
 * detached session would end at once) and `default-size` (the side of a new session that is
 * not given). Null when no server runs: it has no options yet, and the configuration it starts
 * with decides.
 */
async function creationOptions(
  ctx: TmuxContext,
): Promise<{ windowSize: string; destroyUnattached: string; defaultSize: string } | null> {
  let out: string;
  try {
    out = decodeBytes(
      await ctx.read(chainArgv([
        WINDOW_OPTIONS_READ,
        ["show-options", "-gq", "destroy-unattached"],
        ["show-options", "-gq", "default-size"],
      ])),
    );
  } catch (error) {
    if (error instanceof TmuxError && error.kind === "no-server") return null;
    throw error;
  }
  const value = (name: string) =>
    out.split("\n").find((l) => l.startsWith(`${name} `))?.slice(name.length + 1).trim() ?? "";
  return {
    windowSize: personsWindowSize(out),
    destroyUnattached: value("destroy-unattached"),
    defaultSize: value("default-size"),
  };
}

/**
 * Refuses a session of more cells than tmux redraws in time (window_cells.ts). A side not
 * given is the global `default-size`'s, as tmux takes it (80x24 on a server not running yet,
 * unless its configuration says otherwise).
 */
function checkSessionSize(
  width: number | undefined,
  height: number | undefined,
  defaultSize: string | undefined,
): void {
  if (width === undefined && height === undefined) return;
  const given = /^(\d+)x(\d+)$/.exec(defaultSize ?? "");
  checkWindowCells(
    width ?? (given ? Number(given[1]) : 80),
    height ?? (given ? Number(given[2]) : 24),
    "Creating that session",
  );
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
 * ({@link changeView}). With `windowSize` (the global `window-size`, or null for a server not
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
async function created(
  ctx: TmuxContext,
  made: Made,
  args: string[],
  fields: readonly string[],
  tail: string[],
  view?: { snapshot: Snapshot; scope: ViewScope; what: string },
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
        ? await changeView(ctx, view.snapshot, view.scope, view.what, commands, run)
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
function noteShell(
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
function noteRenamed(notes: string[], what: string, before: string, now: string): void {
  if (now === before) return;
  notes.push(
    `The ${what} is named ${JSON.stringify(now)} now, not ${JSON.stringify(before)}: it was ` +
      "renamed right after it was made (a hook in the person's tmux configuration, say).",
  );
}

/** The trailing shell command argument, behind `--` so a leading `-` is no flag. */
function commandTail(command: string | undefined): string[] {
  return command === undefined ? [] : ["--", literalArg(command)];
}

// ---------------------------------------------------------------------------------------------
// create_session

const DESTROY_UNATTACHED_HINT = "Add a window to a session that stays with create_window " +
  "instead. destroy-unattached is the person's choice (their tmux configuration): ask them " +
  "before it is turned off.";

/**
 * Whether tmux would end a new detached session at once, given the global destroy-unattached
 * (tmux 3.4 adds keep-last, which spares the only session, and keep-group, which spares a
 * grouped one: a new session is in no group).
 */
function endsDetached(destroyUnattached: string, sessions: number): boolean {
  if (destroyUnattached === "" || destroyUnattached === "off") return false;
  return destroyUnattached !== "keep-last" || sessions > 0;
}

/** Whether session `sessionId` (an id) still exists. */
async function sessionExists(ctx: TmuxContext, sessionId: string): Promise<boolean> {
  try {
    await ctx.read(["has-session", "-t", sessionId]);
    return true;
  } catch (error) {
    if (error instanceof TmuxError && (error.kind === "no-target" || error.kind === "no-server")) {
      return false;
    }
    throw error;
  }
}

/**
 * The failure of a creation whose server was gone when its step came (tmux's `no-server`). One
 * the call read ended (or lost its socket) since: the step runs only on that server (runIf), so
 * none was started in its place, and the sessions the model knew of went with it. Said plainly,
 * not as "no server is running, create_session starts one": create_session is what starts one,
 * and a retry does.
 */
function serverEnded(ctx: TmuxContext, error: TmuxError): ToolFailure {
  const said = error.message.replace(/\.$/, "");
  const read = ctx.server;
  if (read === null) {
    return new ToolFailure(
      `The tmux server on ${ctx.socketLabel} ended as this call started it (tmux: ${said}); ` +
        "no session was made (or it went with the server).",
      "list_servers shows whether one runs there now; a configuration that ends it would end " +
        "the next one too.",
    );
  }
  return new ToolFailure(
    `The tmux server on ${ctx.socketLabel} (pid ${read.pid}), which this call read, ended ` +
      `during the call or lost its socket (tmux: ${said}); no session was made (or it went ` +
      "with the server), and the sessions, windows and panes it held are gone or out of reach.",
    "Call create_session again: it starts a new server there.",
  );
}

const createSession = defineTool({
  name: "create_session",
  title: "Create session",
  toolset: "execute",
  description:
    "Start a detached session (and server) running the shell or command; returns session, " +
    "window, pane ids.",
  input: {
    name: nameSchema.optional(),
    windowName: nameSchema.optional(),
    startDirectory: startDirectorySchema.optional(),
    width: int().min(1).max(10_000).optional(),
    height: int().min(1).max(10_000).optional(),
    environment: environmentSchema,
    command: commandSchema.optional(),
  },
  output: {
    sessionId: sessionIdSchema,
    name: z.string(),
    windowId: windowIdSchema,
    paneId: paneIdSchema,
    cwd: z.string().describe("Where the pane's process is."),
    notes: notesField,
  },
  annotations: CREATES,
  async run(args, ctx) {
    checkStartDirectory(args.startDirectory);
    await checkNames(ctx, [["session name", args.name], ["window name", args.windowName]]);
    const snapshot = await ctx.snapshot(SESSIONS_ONLY);
    const clash = args.name !== undefined && snapshot.sessions.find((s) => s.name === args.name);
    if (clash) {
      throw new ToolFailure(
        `A session named ${JSON.stringify(args.name)} already exists (${clash.id}).`,
        "Choose another name, or use create_window to add a window to it.",
      );
    }
    const options = snapshot.running ? await creationOptions(ctx) : null;
    if (options && endsDetached(options.destroyUnattached, snapshot.sessions.length)) {
      throw new ToolFailure(
        `destroy-unattached is ${options.destroyUnattached} (${ctx.socketLabel}): tmux ends a ` +
          "session as soon as no client is attached to it, and create_session makes a detached " +
          "one, so it would end at once. Nothing was started.",
        DESTROY_UNATTACHED_HINT,
      );
    }
    checkSessionSize(args.width, args.height, options?.defaultSize);
    const argv = ["new-session", "-d"];
    if (args.name !== undefined) argv.push("-s", formatArg(args.name));
    if (args.windowName !== undefined) argv.push("-n", formatArg(args.windowName));
    if (args.startDirectory !== undefined) argv.push("-c", formatArg(args.startDirectory));
    if (args.width !== undefined) argv.push("-x", String(args.width));
    if (args.height !== undefined) argv.push("-y", String(args.height));
    argv.push(...environmentArgs(args.environment));
    const [sessionId, windowId, paneId, stored, destroyUnattached, shell] = await created(
      ctx,
      "session",
      argv,
      [
        "#{session_id}",
        "#{window_id}",
        "#{pane_id}",
        "#{session_name}",
        "#{destroy-unattached}",
        "#{default-shell}",
      ],
      commandTail(args.command),
      undefined,
      options?.windowSize ?? null,
    ).catch((error: unknown) => {
      throw error instanceof TmuxError && error.kind === "no-server"
        ? serverEnded(ctx, error)
        : error;
    });
    const started = await startedIn(ctx, paneId, args.startDirectory, ["#{session_name}"]);
    const { cwd, notes } = started;
    noteShell(started, args.command, shell);
    // A server started by this call has read its configuration only now; and another client
    // may have turned the option on since it was read. tmux ends such a session right after
    // the step that made it.
    if (
      !["", "0", "off"].includes(destroyUnattached) && !(await sessionExists(ctx, sessionId))
    ) {
      throw new ToolFailure(
        `destroy-unattached is on: tmux ended the new session ${sessionId} at once, because no ` +
          "client is attached to it (create_session makes a detached one), and its process with it.",
        DESTROY_UNATTACHED_HINT,
      );
    }
    if (args.name !== undefined && stored !== args.name) {
      notes.push(`tmux stored the session name as ${JSON.stringify(stored)}.`);
    }
    const name = started.fields?.[0] ?? stored;
    noteRenamed(notes, "session", stored, name);
    return {
      data: { sessionId, name, windowId, paneId, cwd, notes },
      summary: `Created session ${sessionId} ${
        JSON.stringify(name)
      } with window ${windowId} and pane ${paneId}.`,
    };
  },
});

// ---------------------------------------------------------------------------------------------
// create_window

const createWindow = defineTool({
  name: "create_window",
  title: "Create window",
  toolset: "execute",
  description:
    "Add a window running the shell or command; current only if select. Returns window " +
    "and pane ids.",
  input: {
    session: sessionRefSchema,
    name: nameSchema.optional(),
    startDirectory: startDirectorySchema.optional(),
    environment: environmentSchema,
    command: commandSchema.optional(),
    select: flag(),
  },
  output: {
    windowId: windowIdSchema,
    paneId: paneIdSchema,
    sessionId: sessionIdSchema,
    index: int().describe("The window's index in the session."),
    name: z.string(),
    cwd: z.string().describe("Where the pane's process is."),
    notes: notesField,
  },
  annotations: CREATES,
  async run(args, ctx) {
    checkStartDirectory(args.startDirectory);
    await checkNames(ctx, [["window name", args.name]]);
    const snapshot = await ctx.snapshot(SESSIONS_ONLY);
    const session = ctx.session(snapshot, args.session);
    // By default in the session's directory, as tmux starts a person's new window; left to
    // tmux, the directory would depend on how the command reached it (a control client's is
    // its session's, a tmux process's is this server's).
    const directory = args.startDirectory ??
      (session.path.startsWith("/") ? session.path : undefined);
    const options = await creationOptions(ctx);
    const argv = ["new-window", "-t", `${session.id}:`];
    if (!args.select) argv.push("-d");
    if (args.name !== undefined) argv.push("-n", formatArg(args.name));
    if (args.startDirectory !== undefined) argv.push("-c", formatArg(args.startDirectory));
    // The session's folder as tmux has it, byte for byte (its name may not be UTF-8).
    else if (directory !== undefined) {
      argv.push("-c", reportedDirectoryArg(directory, "#{session_path}"));
    }
    argv.push(...environmentArgs(args.environment));
    const [windowId, paneId, printedIndex, printedName, shell] = await created(
      ctx,
      "window",
      argv,
      ["#{window_id}", "#{pane_id}", "#{window_index}", "#{window_name}", "#{default-shell}"],
      commandTail(args.command),
      args.select
        ? { snapshot, scope: { sessions: [session.id] }, what: "Creating a selected window" }
        : undefined,
      options?.windowSize ?? "",
    );
    const started = await startedIn(ctx, paneId, directory, ["#{window_index}", "#{window_name}"]);
    const { cwd, notes } = started;
    noteShell(started, args.command, shell);
    const [index, name] = started.fields ?? [printedIndex, printedName];
    if (args.name !== undefined) noteRenamed(notes, "window", args.name, name);
    return {
      data: {
        windowId,
        paneId,
        sessionId: session.id,
        index: Number(index),
        name,
        cwd,
        notes,
      },
      summary: `Created window ${windowId} (index ${index} of ${session.id}) with pane ${paneId}.`,
    };
  },
});

// ---------------------------------------------------------------------------------------------
// split_window

const DIRECTIONS = ["above", "below", "left", "right"] as const;

const splitWindow = defineTool({
  name: "split_window",
  title: "Split pane",
  toolset: "execute",
  description:
    "Split a pane, running the shell or command. Refused if watched. Use create_window " +
    "then.",
  input: {
    paneId: paneIdSchema,
    direction: z.enum(DIRECTIONS).default("below"),
    size: sizeSchema.optional(),
    startDirectory: startDirectorySchema.optional(),
    environment: environmentSchema,
    command: commandSchema.optional(),
    select: flag(),
  },
  output: {
    paneId: paneIdSchema.describe("The new pane."),
    windowId: windowIdSchema,
    sourcePaneId: paneIdSchema,
    width: count(),
    height: count(),
    cwd: z.string().describe("Where the new pane's process is."),
    notes: notesField,
  },
  annotations: CREATES,
  async run(args, ctx) {
    checkStartDirectory(args.startDirectory);
    const { snapshot, pane: source } = await ctx.paneSnapshot(args.paneId);
    const directory = args.startDirectory ?? (source.cwd.startsWith("/") ? source.cwd : undefined);
    const argv = ["split-window", "-t", source.id];
    argv.push(args.direction === "left" || args.direction === "right" ? "-h" : "-v");
    if (args.direction === "above" || args.direction === "left") argv.push("-b");
    if (!args.select) argv.push("-d");
    if (args.size !== undefined) argv.push("-l", String(args.size));
    if (args.startDirectory !== undefined) argv.push("-c", formatArg(args.startDirectory));
    else if (directory !== undefined) {
      // The source pane's folder as tmux has it, byte for byte (its name may not be UTF-8):
      // tmux expands -c in the session's context, not the pane's, so the pane is looked up.
      argv.push(
        "-c",
        reportedDirectoryArg(
          directory,
          `#{W:#{P:#{?#{==:#{pane_id},${source.id}},#{pane_current_path},}}}`,
        ),
      );
    }
    argv.push(...environmentArgs(args.environment));
    const [paneId, windowId, printedWidth, printedHeight, shell] = await created(
      ctx,
      "pane",
      argv,
      ["#{pane_id}", "#{window_id}", "#{pane_width}", "#{pane_height}", "#{default-shell}"],
      commandTail(args.command),
      // A new pane reshapes its window: whoever shows that window would see it.
      { snapshot, scope: { windowsOf: [source.id] }, what: `Splitting ${source.id}` },
    );
    const started = await startedIn(ctx, paneId, directory, ["#{pane_width}", "#{pane_height}"]);
    const { cwd, notes } = started;
    noteShell(started, args.command, shell);
    const [width, height] = started.fields ?? [printedWidth, printedHeight];
    return {
      data: {
        paneId,
        windowId,
        sourcePaneId: source.id,
        width: Number(width),
        height: Number(height),
        cwd,
        notes,
      },
      summary: `Split ${source.id}: new pane ${paneId} ${args.direction} it, ${width}x${height}.`,
    };
  },
});

// ---------------------------------------------------------------------------------------------
// respawn_pane

/** Sessions a note names by name; a window linked into a large group can end many. */
const MAX_NAMED_SESSIONS = 5;

/**
 * What went with a pane its new process took at once, as kill_pane would list it: its window
 * (it was the last pane there), the sessions that window was the last of, the server (its last
 * session). Null when only the pane went.
 */
async function wentWithPane(
  ctx: TmuxContext,
  before: Snapshot,
  pane: PaneRow,
): Promise<string | null> {
  const { removed, serverStopped, counts } = await removedFrom(ctx, before, reachOfPane(pane));
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

const respawnPane = defineTool({
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
    const guard = {
      force: args.force,
      allowDead: true,
      allowInputOff: true,
      claim: endsSafely(ctx, pane, keepsZoom(ctx, snapshot, pane.id)),
    };
    guardInput(ctx, snapshot, pane, guard);
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
    await deliverInput(
      ctx,
      snapshot,
      pane,
      guard,
      argvCommands([...argv, ...commandTail(args.command)]),
    );
    const { cwd, notes } = await startedIn(ctx, pane.id, args.startDirectory);
    const now = await paneFields(
      ctx,
      pane.id,
      ["#{pane_pid}", "#{pane_current_command}", "#{pane_dead}"],
    );
    if (now === null) {
      const went = await wentWithPane(ctx, snapshot, pane);
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

/** Registers the lifecycle tools (toolset execute). */
export function registerLifecycleTools(registry: ToolRegistry): void {
  registry.add(createSession, createWindow, splitWindow, respawnPane);
}
