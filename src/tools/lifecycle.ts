/**
 * Lifecycle: starting new processes in tmux — sessions, windows, split panes — and restarting
 * a pane's process. Toolset execute: each of these starts a program.
 *
 * New windows and panes are created without taking the focus (`-d`) unless the caller asks,
 * so a person watching a session does not see their view switch under them. Every tool
 * returns the new ids from tmux itself (`-P -F`), and where the process really started.
 *
 * Registered here with create_session, create_window and split_window: respawn_pane and its
 * guards in respawn.ts; the creating step and the new process's arguments, which all four
 * share, in creating.ts.
 *
 * @module
 */

import { z } from "zod";
import type { ActCheck } from "../mcp/act_step.ts";
import type { TmuxContext } from "../mcp/context.ts";
import {
  configuredPath,
  metServerAt,
  noteServerMet,
  occupiedSocket,
  ToolFailure,
} from "../mcp/errors.ts";
import { noServerCause, TmuxError } from "../tmux/tmux_error.ts";
import { SESSIONS_ONLY } from "../tmux/snapshot.ts";
import { shownToPerson } from "./placement.ts";
import type { ToolRegistry } from "../mcp/registry.ts";
import { defineTool, type ToolAnnotations } from "../mcp/tool_spec.ts";
import {
  count,
  flag,
  int,
  paneIdSchema,
  sessionIdSchema,
  sessionRefSchema,
  windowIdSchema,
} from "../mcp/schemas.ts";
import { chainArgv, decodeBytes } from "../tmux/format.ts";
import {
  changes,
  checkNames,
  checkStartDirectory,
  commandSchema,
  formatArg,
  nameSchema,
  notesField,
  reportedDirectoryArg,
  startDirectorySchema,
  startedIn,
} from "./arguments.ts";
import { personsWindowSize, WINDOW_OPTIONS_READ } from "./window_size.ts";
import { checkWindowCells } from "./tmux_limits.ts";
import { defaultSizeWords, readDefaultSize } from "./default_size.ts";
import { unquoteOptionValue } from "./option_lines.ts";
import { windowCellsProblem, type WindowSize } from "../tmux/window_cells.ts";
import { changeView } from "../mcp/view_guard.ts";
import {
  commandTail,
  created,
  environmentArgs,
  environmentSchema,
  madeSummary,
  noteRenamed,
  noteShell,
  wentWithNew,
} from "./creating.ts";
import { respawnPane } from "./respawn.ts";
import { syncedArrival } from "./pane_modes.ts";

/** Starting something new changes the server but destroys nothing, and repeats make more. */
const CREATES: ToolAnnotations = changes({ destructive: false, idempotent: false });

/** A size as tmux takes it: cells, or a percentage of the available space. */
export const sizeSchema = z.union([
  z.number().int().min(1).max(10_000),
  z.string().regex(/^[1-9]\d?%$/, "a percentage from 1% to 99%"),
]);

// ---------------------------------------------------------------------------------------------
// What the person's configuration makes of a new window or session

/**
 * The global options that decide whether a new window or session can be made safely, read in
 * one step: the global `window-size` with the mark of a lend (see sizeSafe, window_size.ts),
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
  const raw = (name: string) =>
    out.split("\n").find((l) => l.startsWith(`${name} `))?.slice(name.length + 1);
  return {
    windowSize: personsWindowSize(out),
    destroyUnattached: raw("destroy-unattached")?.trim() ?? "",
    // As stored, spaces and all (tmux quotes such a value): tmux reads "10000x10000 " too.
    defaultSize: unquoteOptionValue(raw("default-size") ?? ""),
  };
}

/**
 * Refuses a session of more cells than tmux redraws in time (window_cells.ts). A side not
 * given is the global `default-size`'s, read as tmux reads it (default_size.ts; 80x24 on a
 * server not running yet, unless its configuration says otherwise). Checked when no side is
 * given too: the default-size may be a person's, or set by `tmux set` in a pane, and tmux
 * takes spellings of a size past the cap (`010000x010000`) as readily as plain ones.
 */
function checkSessionSize(
  width: number | undefined,
  height: number | undefined,
  defaultSize: string | undefined,
): void {
  const from = readDefaultSize(defaultSize ?? "");
  const size = { width: width ?? from.width, height: height ?? from.height };
  const fromDefault = `the global default-size ${defaultSizeWords(defaultSize ?? "")}`;
  checkWindowCells(
    size.width,
    size.height,
    width !== undefined && height !== undefined
      ? "Creating that session"
      : width === undefined && height === undefined
      ? `Creating a session at ${fromDefault}`
      : `Creating that session (its ${
        width === undefined ? "width" : "height"
      } from ${fromDefault})`,
  );
}

/**
 * Makes a new session's window `want`, the size asked for (its sides not given as tmux took
 * them from default-size), when tmux made it otherwise (`made`): a new window takes the size of
 * a person's terminal under `window-size latest` (tmux's default, and lent for the instant of a
 * creation under their `manual`: window_size.ts), whatever new-session's -x and -y said. Resized
 * as resize_window resizes, under the same guard (nobody is shown a session just made, unless a
 * hook of theirs put them there); a window tmux would make past the cap (a configuration read
 * only as this call started the server) is not made so. Returns the size the window has then
 * and the note on what was done, or why not.
 */
async function sizeAsAsked(
  ctx: TmuxContext,
  windowId: string,
  made: WindowSize,
  want: WindowSize,
  windowSize: string | null,
): Promise<{ size: WindowSize; note: string }> {
  const asked = `${want.width}x${want.height}`;
  const why = windowSize === null || ["latest", "manual"].includes(windowSize)
    ? "under window-size latest a new window takes the size of the client active last"
    : "a hook of the person's, say";
  const told = `tmux made window ${windowId} ${made.width}x${made.height} (${why}), not the ` +
    `${asked} asked for`;
  const problem = windowCellsProblem(want.width, want.height);
  if (problem !== undefined) {
    return { size: made, note: `${told}; left so: ${problem}.` };
  }
  try {
    const { snapshot } = await ctx.windowAlone(windowId);
    await changeView(ctx, snapshot, { windows: [windowId] }, `Resizing window ${windowId}`, [
      ["resize-window", "-t", windowId, "-x", String(want.width), "-y", String(want.height)],
    ]);
  } catch (error) {
    // Refused by the guard, or the window gone (its process ended at once): said, since the
    // session was made all the same.
    const gone = error instanceof TmuxError && error.kind === "no-target";
    if (!(error instanceof ToolFailure) && !gone) throw error;
    return { size: made, note: `${told}; left so: ${error.message}` };
  }
  // Read again for the reply (a person's after-resize-window hook may have had its say); a
  // window gone meanwhile (its process ended at once) keeps the size it was given.
  let now: WindowSize = want;
  try {
    now = ctx.window(await ctx.windowSnapshot(windowId), windowId);
  } catch (error) {
    if (!(error instanceof ToolFailure)) throw error;
  }
  return {
    size: { width: now.width, height: now.height },
    note: `${told}, and resized it to ${now.width}x${now.height}: ${MANUAL_SIZE_NOTE}`,
  };
}

/**
 * What a window resized by tmux-mcp keeps (resize_window's note, and create_session's where it
 * resized the new window): tmux's own doing, said so that a window that later keeps its size
 * surprises nobody.
 */
export const MANUAL_SIZE_NOTE = "tmux keeps this window at that size from now on (resize-window " +
  "sets its window-size option to manual); set_option window-size to latest (scope window) " +
  "gives its size back to the clients.";

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

/**
 * Refuses to start a server at a configured socket path (--socket-path, TMUX_MCP_SOCKET_PATH,
 * or the one TMUX names) where something is that no server answers on: tmux deletes whatever
 * the path names before it starts a server there, and a person's file at a mistyped
 * --socket-path would go with it (errors.ts, occupiedSocket). This server cannot look at the
 * path; a read that starts no server, made only when the snapshot found none, tells "refused"
 * from "nothing there" by tmux's words (noServerCause). Any other answer leaves the creation
 * to meet what it meets. Not refused: a path where this process met a server before
 * (noteServerMet: tmux leaves its socket behind when its server ends); a socket name's
 * socket, in tmux's own folder, where a socket left by a server that ended is tmux's to
 * replace, as tmux itself does.
 */
async function refuseOccupied(ctx: TmuxContext): Promise<void> {
  const at = configuredPath(ctx.address, ctx.config.callerEnv.tmux);
  if (at === null || metServerAt(ctx.address, at)) return;
  try {
    await ctx.read(["list-sessions", "-F", ""]);
  } catch (error) {
    if (noServerCause(error) === "refused") throw occupiedSocket(ctx.address, at);
  }
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
    width: count(),
    height: count(),
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
    if (snapshot.running) noteServerMet(ctx.address, ctx.config.callerEnv.tmux);
    else await refuseOccupied(ctx);
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
    const [
      sessionId,
      windowId,
      paneId,
      stored,
      destroyUnattached,
      shell,
      printedWidth,
      printedHeight,
      sessionDefaultSize,
    ] = await created(
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
        "#{window_width}",
        "#{window_height}",
        // new-session stores -x and -y here, the sides not given from the global value: the
        // size tmux makes the window when no client sizes it.
        "#{default-size}",
      ],
      commandTail(args.command),
      undefined,
      options?.windowSize ?? null,
    ).catch((error: unknown) => {
      throw error instanceof TmuxError && error.kind === "no-server"
        ? serverEnded(ctx, error)
        : error;
    });
    noteServerMet(ctx.address, ctx.config.callerEnv.tmux);
    const started = await startedIn(ctx, paneId, args.startDirectory, [
      "#{session_name}",
      "#{window_width}",
      "#{window_height}",
    ]);
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
    // As tmux has it after the step (a person's hook may have resized it), else as printed.
    let size: WindowSize = {
      width: Number(started.fields?.[1] ?? printedWidth),
      height: Number(started.fields?.[2] ?? printedHeight),
    };
    const want = readDefaultSize(sessionDefaultSize);
    const asked = args.width !== undefined || args.height !== undefined;
    if (
      asked && started.fields !== null &&
      (size.width !== want.width || size.height !== want.height)
    ) {
      const resized = await sizeAsAsked(ctx, windowId, size, want, options?.windowSize ?? null);
      size = resized.size;
      notes.push(resized.note);
    }
    const went = await wentWithNew(
      ctx,
      started,
      { paneId, windowId },
      new Map([[sessionId, name]]),
    );
    return {
      data: { sessionId, name, windowId, paneId, ...size, cwd, notes },
      summary: madeSummary(
        `Created session ${sessionId} ${JSON.stringify(name)} with window ${windowId}${
          started.fields === null ? "" : ` (${size.width}x${size.height})`
        } and pane ${paneId}`,
        started,
        went,
      ),
    };
  },
});

// ---------------------------------------------------------------------------------------------
// create_window

/**
 * Refuses a window tmux would make past the cell cap (window_cells.ts) in session `sessionId`:
 * where no client sizes a new window there (none attached but those that ignore sizes, as
 * tmux-mcp's own), tmux makes it the session's `default-size`, which a person or a program in
 * one of its panes (`tmux set default-size ...`) may have set past the cap, in any spelling
 * tmux reads (default_size.ts). A session a client sizes makes the window that client's size,
 * and is not held to it: under a person's `manual` too, since the creation lends `latest`
 * (window_size.ts). One read, both in one step.
 */
async function checkWindowSize(ctx: TmuxContext, sessionId: string): Promise<void> {
  const out = decodeBytes(
    await ctx.read(chainArgv([
      ["display-message", "-p", "-t", `${sessionId}:`, "#{default-size}"],
      ["list-clients", "-t", sessionId, "-F", "client #{client_flags}"],
    ])),
  );
  const [stored, ...clients] = out.split("\n");
  const size = readDefaultSize(stored);
  if (windowCellsProblem(size.width, size.height) === undefined) return;
  const sized = clients.some((l) =>
    l.startsWith("client ") && !l.slice(7).split(",").includes("ignore-size")
  );
  if (sized) return;
  checkWindowCells(
    size.width,
    size.height,
    `Creating a window at the session's default-size ${defaultSizeWords(stored)}, which no ` +
      "client attached there sizes,",
  );
}

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
    await checkWindowSize(ctx, session.id);
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
    const went = await wentWithNew(
      ctx,
      started,
      { paneId, windowId },
      new Map([[session.id, session.name]]),
    );
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
      summary: madeSummary(
        `Created window ${windowId} (index ${index} of ${session.id}) with pane ${paneId}`,
        started,
        went,
      ),
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
    // tmux 3.3a unzooms a window to split it, and a person who left it zoomed (looking at
    // another window) would come back to it unzoomed: -Z zooms it again after. Only where it
    // is zoomed (-Z zooms one that is not), which tmux checks at the instant; and not where a
    // person shows it (refused below, but for --allow-attended-input, where the hook guard has
    // asked them about the unzoom: what it asks about is what happens).
    const keepZoom = source.windowZoomed && !shownToPerson(snapshot, source.windowId);
    if (keepZoom) argv.push("-Z");
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
    // A window with synchronize-panes on copies what a person types there to the new pane too
    // (and to its program): refused where their status line lists that window, not only where
    // they are shown it (pane_modes.ts syncedArrival).
    const splitting = `Splitting ${source.id}`;
    const synced = syncedArrival(
      ctx,
      snapshot,
      source,
      `${splitting} into a new pane of window ${source.windowId}`,
    );
    const zoomCheck = source.windowZoomed && !keepZoom ? [] : [sameZoom(source.id, keepZoom)];
    const [paneId, windowId, printedWidth, printedHeight, shell] = await created(
      ctx,
      "pane",
      argv,
      ["#{pane_id}", "#{window_id}", "#{pane_width}", "#{pane_height}", "#{default-shell}"],
      commandTail(args.command),
      // A new pane reshapes its window: whoever shows that window would see it.
      {
        snapshot,
        scope: { windowsOf: [source.id], listedWindowsOf: synced?.listedWindowsOf ?? [] },
        what: synced?.listedWindowsOf.length ? synced.what : splitting,
        checks: [...zoomCheck, ...(synced ? [synced.check] : [])],
      },
    );
    const started = await startedIn(ctx, paneId, directory, [
      "#{pane_width}",
      "#{pane_height}",
      "#{window_zoomed_flag}",
      ZOOMED_ON,
    ]);
    const { cwd, notes } = started;
    noteShell(started, args.command, shell);
    const [width, height] = started.fields ?? [printedWidth, printedHeight];
    // The window zoomed still (a person's hook may have changed it since): on which pane.
    const zoomedOn = started.fields?.[2] === "1" ? started.fields[3] : null;
    if (source.windowZoomed && !keepZoom && started.fields?.[2] === "0") {
      notes.push(
        `The split unzoomed window ${windowId}, which a person's client shows (tmux unzooms a ` +
          "window to split it; --allow-attended-input lets it go ahead).",
      );
    }
    if (zoomedOn !== null) {
      notes.push(
        zoomedOn === paneId
          ? `Window ${windowId} was zoomed, and stays zoomed, now on the new pane ${paneId} ` +
            `(select): the other panes are hidden.`
          : `Window ${windowId} was zoomed on ${zoomedOn}, and stays so: the new pane ` +
            `${paneId} is hidden until the window is unzoomed (resize_pane zoom: false).`,
      );
    }
    const went = await wentWithNew(
      ctx,
      started,
      { paneId, windowId },
      new Map(source.placements.map((p) => [p.sessionId, p.sessionName])),
    );
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
      summary: madeSummary(
        `Split ${source.id}: new pane ${paneId} ${args.direction} it, ${width}x${height}` +
          (zoomedOn === null
            ? ""
            : zoomedOn === paneId
            ? `, the window zoomed on it`
            : `, hidden: the window stays zoomed on ${zoomedOn}`),
        started,
        went,
      ),
    };
  },
});

/** The pane a window is zoomed on (its active one), expanded in a pane of it. */
const ZOOMED_ON = "#{P:#{?pane_active,#{pane_id},}}";

/**
 * Holds in tmux at the instant of a split of `paneId`: its window is zoomed just as read
 * (`zoomed`), so that split-window's -Z, given or not, keeps the window as it is.
 */
function sameZoom(paneId: string, zoomed: boolean): ActCheck {
  return {
    condition: {
      target: paneId,
      format: zoomed ? "#{==:#{window_zoomed_flag},1}" : "#{!=:#{window_zoomed_flag},1}",
    },
    refusal: new ToolFailure(
      `Pane ${paneId}'s window was ${
        zoomed ? "unzoomed" : "zoomed"
      } at the instant of the split, so nothing was made (a split would have ${
        zoomed ? "zoomed" : "unzoomed"
      } it).`,
      "Call split_window again: it reads the window afresh.",
    ),
  };
}

/** Registers the lifecycle tools (toolset execute). */
export function registerLifecycleTools(registry: ToolRegistry): void {
  registry.add(createSession, createWindow, splitWindow, respawnPane);
}
