/**
 * The resources: what a client can read, list, complete and subscribe to, besides the tools.
 *
 * - `tmux://server`: sessions, windows and panes (JSON), updated when they change (see live.ts
 *   for what is watched: not a pane's command);
 * - `tmux://pane/{pane}`: a pane's visible screen (text), updated when it prints; `tmux://pane/3`
 *   is `%3`;
 * - `tmux://agents`: every window carrying the marks `tmux-mcp hook` writes, with its panes and
 *   placements (JSON).
 *
 * `?socket=NAME` reaches another tmux server, as `socket_name` does for a tool. Contents are
 * bounded like tool results; pane text is hostile, so no control character of it survives.
 *
 * Adding a live resource is one more {@link ResourceSpec}: a read, and a `watch` that calls
 * back when it may have changed (see live.ts for the feeds there are).
 *
 * @module
 */

import { type TmuxContext, TmuxContext as Context } from "../mcp/context.ts";
import { clip, describeSocket, ToolFailure, visible } from "../mcp/errors.ts";
import {
  byteLength,
  cutString,
  fitEntries,
  jsonBytes,
  MAX_METADATA_BYTES,
  SEPARATORS_AND_BIDI,
  startUnits,
  tailLines,
} from "../mcp/bounds.ts";
import type { LogLevel } from "../mcp/call_log.ts";
import type { ToolRegistry } from "../mcp/registry.ts";
import { socketNameField } from "../mcp/tool_spec.ts";
import type { ResourceSpec } from "../mcp/resource_spec.ts";
import { captureRows, type PaneState, trimRow } from "../tmux/capture.ts";
import { modeNote } from "./pane_content.ts";
import { execFast, observeControl } from "../tmux/control.ts";
import { newGuard, parseRecords, recordFormat } from "../tmux/format.ts";
import { TmuxError } from "../tmux/tmux_error.ts";
import { isPerson } from "../tmux/identity.ts";
import type { PaneBrief, Snapshot } from "../tmux/snapshot.ts";
import { watchPane, watchServer } from "./live.ts";

/** Where a resource URI points. */
interface Target {
  readonly kind: "server" | "agents" | "pane";
  /** `%N` for a pane. */
  readonly paneId?: string;
  readonly socketName?: string;
  /** An SSH destination (`--ssh`), from `?host=`. */
  readonly host?: string;
}

/** Reads a `tmux://` URI strictly: a known kind, a pane number, at most `?socket=NAME`. */
export function parseTarget(uri: string): Target {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new ToolFailure(`${clip(uri)} is not a URI.`, "resources/list shows the resources.");
  }
  const kind = url.host;
  const params = [...url.searchParams.keys()];
  if (url.protocol !== "tmux:" || !["server", "agents", "pane"].includes(kind)) {
    throw new ToolFailure(
      `No resource ${clip(uri)}.`,
      "tmux://server, tmux://agents and tmux://pane/{pane} exist.",
    );
  }
  if (
    params.some((p) => p !== "socket" && p !== "host") || new Set(params).size < params.length ||
    url.hash !== ""
  ) {
    throw new ToolFailure(
      `${clip(uri)}: the only query a resource takes is ?socket=NAME, and host=HOST (--ssh).`,
    );
  }
  const host = url.searchParams.get("host") ?? undefined;
  let socketName: string | undefined;
  if (url.searchParams.has("socket")) {
    const parsed = socketNameField.safeParse(url.searchParams.get("socket"));
    if (!parsed.success || !parsed.data) {
      throw new ToolFailure(
        `${clip(uri)}: socket must be a tmux socket name (no '/', no control characters).`,
      );
    }
    socketName = parsed.data;
  }
  if (kind === "pane") {
    // No leading zeros: tmux://pane/03 would be pane %3 again under a URI of its own, told of
    // each of its changes once more (resource_spec.ts notCanonical).
    const m = /^\/(0|[1-9]\d{0,8})$/.exec(url.pathname);
    if (!m) {
      throw new ToolFailure(
        `${clip(uri)} names no pane: tmux://pane/3 is pane %3 (no leading zeros).`,
        "resources/list lists the panes.",
      );
    }
    return { kind, paneId: `%${Number(m[1])}`, socketName, ...(host !== undefined && { host }) };
  }
  if (url.pathname !== "") throw new ToolFailure(`No resource ${clip(uri)}.`);
  return { kind: kind as "server" | "agents", socketName, ...(host !== undefined && { host }) };
}

/**
 * Throws a ToolFailure when a resource URI's `?host=` is not one given to `--ssh`: the URI names
 * nothing here, whatever its kind (the job resource's too).
 */
export function refuseUnknownHost(host: string | undefined, ctx: TmuxContext): void {
  if (host === undefined || ctx.runner.hosts.includes(host)) return;
  throw new ToolFailure(
    `No SSH host ${JSON.stringify(host)}: ?host= takes one given to --ssh.`,
    `Hosts: ${ctx.runner.hosts.map((h) => JSON.stringify(h)).join(", ") || "none"}.`,
  );
}

/**
 * The context of a resource's server: the one its URI names, else the server's own. Throws
 * when it names none (an unknown host): reads, watches and subscriptions all test that here.
 */
function contextOn(ctx: TmuxContext, target: Target): TmuxContext {
  refuseUnknownHost(target.host, ctx);
  if (!target.socketName && target.host === undefined) return ctx;
  return new Context(
    ctx.runner,
    ctx.config,
    target.socketName,
    ctx.signal,
    ctx.progress,
    ctx.log,
    target.host,
  );
}

/** The URI of a pane on the default server. */
function paneUri(paneId: string): string {
  return `tmux://pane/${paneId.slice(1)}`;
}

/** Bytes of the resource's text at most (the same bound as a tool result's data). */
function bound(ctx: TmuxContext): number {
  return ctx.config.maxResultBytes;
}

// ---------------------------------------------------------------------------------------------
// Text a pane wrote, made safe to show

/**
 * What reads as one of {@link visible}'s escapes after a run of backslashes: `xNN` or `uXXXX`
 * in hex of either case (it writes `\x1B` and `\u202e`, and a reader takes `\x1b` and `\u202E`
 * alike), or a character it shows so.
 */
const ESCAPE_AHEAD = new RegExp(
  String
    .raw`^(?:x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|[\u0000-\u0008\u000b-\u001f\u007f-\u009f${SEPARATORS_AND_BIDI}])`,
);

/**
 * Every control character (C0 but tab and newline, DEL, and C1, which some terminals obey as
 * escapes) shown as `\xNN`, and U+2028, U+2029 and the bidirectional controls as `\uXXXX`: a
 * screen read back must not drive the terminal it is shown on, break its lines or read in
 * another order. The same rule as an error text's ({@link visible}), and, so that a pane that
 * printed the six characters `\u202e` cannot pass for one that holds the control, a run of
 * backslashes before what reads as an escape is doubled: 2k+1 backslashes then `u202e` read as
 * k backslashes and U+202E; 2k of them, as k backslashes and the text `u202e`. Every other
 * backslash (`C:\path`, `\n` in code) stays single.
 */
export function inert(text: string): string {
  // Each run matched once, then what follows it looked at (a lookahead would retry the run
  // from each of its backslashes, quadratic in its length).
  return visible(text.replace(
    /\\+/g,
    (run, at: number) =>
      ESCAPE_AHEAD.test(text.slice(at + run.length, at + run.length + 5)) ? run + run : run,
  ));
}

/** Room in a pane's text for its first line, the note on what it left out and a mode over it. */
const NOTE_BYTES = 320;

/**
 * A pane's visible screen as text, within the bound as a JSON string: the bottom rows, and of
 * a row too wide for the bound alone (a wide pane, combining marks), its end, as capture_pane
 * keeps a tail. The first line is always the server's own, naming the pane and what was left
 * out (`[pane %3: 24 rows, none left out]`), so the pane's first row is always the second
 * line: a pane that prints a note of its own cannot pass it off as the server's.
 */
async function readPane(ctx: TmuxContext, paneId: string): Promise<string> {
  let rows: string[];
  let state: PaneState;
  try {
    ({ rows, state } = await captureRows(ctx.runner, ctx.address, paneId, {}, {
      signal: ctx.signal,
    }));
  } catch (error) {
    if (error instanceof TmuxError && error.kind === "no-target") throw missingPane(ctx, paneId);
    throw error;
  }
  // Trailing spaces only, as capture_pane trims them (a no-break space is the pane's text).
  const lines = rows.map((row) => inert(trimRow(row)));
  while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  const kept = tailLines(lines, lines.length, bound(ctx) - NOTE_BYTES);
  let text = kept.text;
  let cutBytes = 0;
  if (kept.firstLineCut) {
    const row = lines[lines.length - 1];
    text = row.slice(pastEscape(row, row.length - text.length));
    cutBytes = byteLength(row) - byteLength(text);
  }
  const notes = [
    ...kept.droppedLines > 0 ? [`${kept.droppedLines} rows above left out`] : [],
    ...cutBytes > 0 ? [`the first ${cutBytes} bytes of the row below left out`] : [],
  ];
  const note = notes.length > 0
    ? `${notes.join(", ")}; capture_pane reads them`
    : `${lines.length} row${lines.length === 1 ? "" : "s"}, none left out`;
  // A mode over the pane: what a person sees there is not these rows.
  const mode = modeNote(paneId, state).trim().replace(/\.$/, "");
  return `[pane ${paneId}: ${note}${mode ? `; ${mode}` : ""}]\n${text}`;
}

/**
 * `start`, or the end of the run of backslashes and the `\xNN` or `\uXXXX` after it that
 * {@link inert} wrote around it: a row's kept end starts with a character of the pane's, never
 * within an escape or a run of backslashes it doubled (half a run would read otherwise).
 */
export function pastEscape(row: string, start: number): number {
  let from = Math.max(0, start - 5);
  while (from > 0 && row[from - 1] === "\\") from--;
  const unit = /\\+(?:x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4})?/g;
  unit.lastIndex = from;
  for (let m = unit.exec(row); m !== null && m.index < start; m = unit.exec(row)) {
    if (start < m.index + m[0].length) return m.index + m[0].length;
  }
  return start;
}

function missingPane(ctx: TmuxContext, paneId: string): ToolFailure {
  return new ToolFailure(
    `No pane ${paneId} on ${describeSocket(ctx.address)}.`,
    "resources/list and list_panes list the panes there are.",
  );
}

// ---------------------------------------------------------------------------------------------
// The server's shape

/** Text fields of names and titles, cut like every tool's metadata. */
function short(text: string): string {
  return inert(cutString(text, MAX_METADATA_BYTES).text);
}

/**
 * Sessions, windows and panes as one JSON value, within the bound: the sessions in at most a
 * third of it, the windows in at most half of what is left, the panes in the rest; each list
 * keeps its leading entries and counts the ones it left out.
 */
export function serverView(snapshot: Snapshot<PaneBrief>, maxBytes: number): unknown {
  if (!snapshot.running) {
    return {
      running: false,
      sessions: [],
      windows: [],
      panes: [],
      complete: true,
      omittedSessions: 0,
      omittedWindows: 0,
      omittedPanes: 0,
    };
  }
  const windowsOf = new Map<string, { index: number; id: string }[]>();
  for (const w of snapshot.windows) {
    for (const p of w.placements) {
      const list = windowsOf.get(p.sessionId) ?? [];
      list.push({ index: p.index, id: w.id });
      windowsOf.set(p.sessionId, list);
    }
  }
  // People attached, as list_sessions counts them: tmux's own count takes in control clients,
  // tmux-mcp's among them, which never count as a person watching.
  const people = new Map<string, number>();
  for (const c of snapshot.clients) {
    if (isPerson(c)) people.set(c.sessionId, (people.get(c.sessionId) ?? 0) + 1);
  }
  const sessions = snapshot.sessions.map((s) => ({
    id: s.id,
    name: short(s.name),
    attached: people.get(s.id) ?? 0,
    windows: (windowsOf.get(s.id) ?? []).sort((a, b) => a.index - b.index).map((w) => w.id),
  }));
  const panesOf = new Map<string, string[]>();
  for (const p of snapshot.panes) {
    const list = panesOf.get(p.windowId) ?? [];
    list.push(p.id);
    panesOf.set(p.windowId, list);
  }
  const windows = snapshot.windows.map((w) => ({
    id: w.id,
    name: short(w.name),
    zoomed: w.zoomed,
    panes: panesOf.get(w.id) ?? [],
    placements: w.placements.map((p) => ({
      sessionId: p.sessionId,
      index: p.index,
      active: p.active,
    })),
  }));
  const panes = snapshot.panes.map((p) => ({
    id: p.id,
    windowId: p.windowId,
    index: p.index,
    active: p.active,
    command: short(p.command),
    title: short(p.title),
    dead: p.dead,
    width: p.width,
    height: p.height,
  }));
  // Room for the keys, the counts and the brackets around the three lists.
  let room = Math.max(0, maxBytes - 200);
  const keptSessions = fitEntries(sessions, Math.floor(room / 3));
  room -= jsonBytes(keptSessions.kept);
  const keptWindows = fitEntries(windows, Math.floor(room / 2));
  room -= jsonBytes(keptWindows.kept);
  const keptPanes = fitEntries(panes, Math.max(0, room));
  return {
    running: true,
    sessions: keptSessions.kept,
    windows: keptWindows.kept,
    panes: keptPanes.kept,
    complete: keptSessions.omitted + keptWindows.omitted + keptPanes.omitted === 0,
    omittedSessions: keptSessions.omitted,
    omittedWindows: keptWindows.omitted,
    omittedPanes: keptPanes.omitted,
  };
}

// ---------------------------------------------------------------------------------------------
// The agents

/** Every window's agent marks, by window id (windows without marks left out). */
async function agentMarks(ctx: TmuxContext): Promise<Map<string, [string, string]>> {
  const guard = newGuard();
  const result = await execFast(ctx.runner, ctx.address, [
    "list-windows",
    "-a",
    "-F",
    recordFormat(guard, ["#{window_id}", "#{@agent-state}", "#{@agent-message}"]),
  ], { signal: ctx.signal });
  const marks = new Map<string, [string, string]>();
  if (result.code !== 0) return marks;
  for (const [id, state, message] of parseRecords(result.stdout, guard, 3)) {
    if (state !== "" || message !== "") marks.set(id, [state, message]);
  }
  return marks;
}

/** The windows that carry agent marks, with their panes and placements, within the bound. */
async function readAgents(ctx: TmuxContext): Promise<unknown> {
  const snapshot = await ctx.briefSnapshot({ sessions: false });
  if (!snapshot.running) return { running: false, agents: [], complete: true, omittedAgents: 0 };
  const marks = await agentMarks(ctx);
  const sessionName = new Map<string, string>();
  for (const w of snapshot.windows) {
    for (const p of w.placements) sessionName.set(p.sessionId, p.sessionName);
  }
  const agents = snapshot.windows.filter((w) => marks.has(w.id)).map((w) => {
    const [state, message] = marks.get(w.id)!;
    const panes = snapshot.panes.filter((p) => p.windowId === w.id);
    return {
      windowId: w.id,
      windowName: short(w.name),
      state: short(state),
      message: short(message),
      paneId: (panes.find((p) => p.active) ?? panes[0])?.id ?? null,
      panes: panes.map((p) => p.id),
      placements: w.placements.map((p) => ({
        sessionId: p.sessionId,
        sessionName: short(sessionName.get(p.sessionId) ?? p.sessionName),
        index: p.index,
        active: p.active,
      })),
    };
  });
  const kept = fitEntries(agents, bound(ctx) - 200);
  return {
    running: true,
    agents: kept.kept,
    complete: kept.omitted === 0,
    omittedAgents: kept.omitted,
  };
}

// ---------------------------------------------------------------------------------------------
// The specs

const SOCKET_NOTE = " Add ?socket=NAME for another tmux server, &host=HOST for an SSH host.";

function serverSpec(name: string, uri: string): ResourceSpec {
  return {
    name,
    title: "tmux server",
    description: "Sessions, windows and panes (ids, names, sizes, titles, people attached); " +
      "updated when they change, but not when a pane only runs another command." + SOCKET_NOTE,
    mimeType: "application/json",
    uri,
    tools: ["list_panes"],
    read: async (at, _variables, ctx) => {
      const on = contextOn(ctx, parseTarget(at));
      return JSON.stringify(serverView(await on.briefSnapshot(), bound(on)));
    },
    watch: (at, ctx, changed) => {
      const on = contextOn(ctx, parseTarget(at));
      return watchServer(on.runner, on.address, "topology", changed);
    },
    check: (at, ctx) => void contextOn(ctx, parseTarget(at)),
  };
}

function agentsSpec(name: string, uri: string): ResourceSpec {
  return {
    name,
    title: "Agents in tmux",
    description: "Windows marked by `tmux-mcp hook` (@agent-state, @agent-message) with their " +
      "panes and placements; updated when a mark changes." + SOCKET_NOTE,
    mimeType: "application/json",
    uri,
    tools: ["list_windows"],
    read: async (at, _variables, ctx) =>
      JSON.stringify(await readAgents(contextOn(ctx, parseTarget(at)))),
    watch: (at, ctx, changed) => {
      const on = contextOn(ctx, parseTarget(at));
      const marks = watchServer(on.runner, on.address, "agents", changed);
      const shape = watchServer(on.runner, on.address, "topology", changed);
      return {
        ready: Promise.all([marks.ready, shape.ready]).then(() => {}),
        stop: () => {
          marks.stop();
          shape.stop();
        },
      };
    },
    check: (at, ctx) => void contextOn(ctx, parseTarget(at)),
  };
}

/** Pane ids of the default server, in tmux's order. */
async function paneIds(ctx: TmuxContext): Promise<string[]> {
  const snapshot = await ctx.briefSnapshot({ sessions: false, windows: false });
  return snapshot.panes.map((p) => p.id);
}

/**
 * The pane resource; `log` tells the operator (stderr, and 2025-11-25 clients' log) when a
 * subscription's pane went with its tmux server and another server answers on its socket now.
 */
const paneSpec = (log: (level: LogLevel, message: string) => void): ResourceSpec => ({
  name: "tmux-pane",
  title: "tmux pane",
  description: "A pane's visible screen as text; tmux://pane/3 is pane %3. Updated when the " +
    "pane prints." + SOCKET_NOTE,
  mimeType: "text/plain",
  uri: "tmux://pane/{pane}",
  tools: ["capture_pane"],
  list: async (ctx) => {
    const snapshot = await ctx.briefSnapshot({ sessions: false });
    const entries = snapshot.panes.map((p) => ({
      uri: paneUri(p.id),
      // Cut before the escapes are written, between characters (a lone surrogate is refused
      // by strict JSON parsers).
      name: `pane ${p.id}: ${short(startUnits(p.title || p.command, 80))}`,
    }));
    return fitEntries(entries, bound(ctx)).kept;
  },
  complete: {
    pane: async (typed, ctx) =>
      (await paneIds(ctx)).map((id) => id.slice(1)).filter((n) => n.startsWith(typed)).slice(
        0,
        100,
      ),
  },
  read: async (at, _variables, ctx) => {
    const target = parseTarget(at);
    return await readPane(contextOn(ctx, target), target.paneId!);
  },
  watch: (at, ctx, changed) => {
    const target = parseTarget(at);
    const on = contextOn(ctx, target);
    return watchPane(on.runner, on.address, target.paneId!, changed, (why) =>
      // A subscription names a pane by its id: never the new server's pane of the same id.
      log(
        "warning",
        `${why}: ${clip(at)} follows it no more (unsubscribe, or end the listen stream, and ` +
          "subscribe again to follow the pane there now).",
      ));
  },
  check: (at, ctx) => void contextOn(ctx, parseTarget(at)),
  watchList: (ctx, changed) => {
    // The panes there are, told only when that set changes (not on every layout change).
    let known: string | null = null;
    let reading = false;
    let again = false;
    const look = async () => {
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      try {
        do {
          again = false;
          const ids = (await paneIds(ctx).catch(() => [] as string[])).join(" ");
          if (known !== null && ids !== known) changed();
          known = ids;
        } while (again);
      } finally {
        reading = false;
      }
    };
    look();
    return watchServer(ctx.runner, ctx.address, "topology", () => void look()).stop;
  },
});

/**
 * Registers the resources, and sends what an operator wants to know about the control channel
 * (a connection lost or regained, a tmux server gone or back) as log messages.
 */
export function registerResources(registry: ToolRegistry): void {
  registry.addResource(
    serverSpec("tmux-server", "tmux://server"),
    agentsSpec("tmux-agents", "tmux://agents"),
    paneSpec((level, message) => registry.subscriptions.log(level, message)),
    serverSpec("tmux-server-on", "tmux://server{?socket}"),
    agentsSpec("tmux-agents-on", "tmux://agents{?socket}"),
  );
  const ctx = registry.contextFor(new AbortController().signal);
  // SSH hosts (--ssh): the same on a host, and on a host's other server.
  if (ctx.runner.hosts.length > 0) {
    registry.addResource(
      serverSpec("tmux-server-host", "tmux://server{?host}"),
      agentsSpec("tmux-agents-host", "tmux://agents{?host}"),
      serverSpec("tmux-server-host-on", "tmux://server{?socket,host}"),
      agentsSpec("tmux-agents-host-on", "tmux://agents{?socket,host}"),
    );
  }
  observeControl(ctx.runner, (event) => {
    const level = (event.kind === "lost" && !event.routine) || event.kind === "gone"
      ? "warning"
      : "info";
    registry.subscriptions.log(level, `tmux on ${describeSocket(event.address)}: ${event.message}`);
  });
}
