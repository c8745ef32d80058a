/**
 * Servers: the one this MCP server drives (get_server_info, asked which server its socket leads
 * to now) and every one in reach (list_servers, each probed with a short timeout). Both let go of
 * control clients attached to a server that is no longer on its socket.
 *
 * @module
 */

import { z } from "zod";
import type { TmuxContext } from "../mcp/context.ts";
import { defineTool, READ_ONLY, socketNameField } from "../mcp/tool_spec.ts";
import { count, int } from "../mcp/schemas.ts";
import { noteSocketServer, socketServerPid } from "../tmux/control.ts";
import { newGuard, parseRecords, recordFormat } from "../tmux/format.ts";
import { isPerson, parseTmuxEnv } from "../tmux/identity.ts";
import type { ServerAddress } from "../tmux/server_address.ts";
import { socketPathIn } from "../tmux/same_socket.ts";
import { TmuxError } from "../tmux/tmux_error.ts";
import { NO_SERVER, type PaneBrief, type Snapshot } from "../tmux/snapshot.ts";
import { describeServer } from "../tmux/which_server.ts";

/**
 * The read get_server_info reports: every pane counts (and may be the caller's), what runs in
 * them does not. Read over the control connection, it may describe a server whose socket file
 * is gone, another server started on its path or none: the socket is asked which server it
 * leads to (a tmux process of its own, a few milliseconds), and when that is another, the
 * server there is read, or, with none there, none is running.
 */
async function serverOnSocket(ctx: TmuxContext): Promise<Snapshot<PaneBrief>> {
  const snapshot = await ctx.briefSnapshot({ processInfo: false });
  if (!ctx.runner.control) return snapshot;
  let pid: number | null;
  try {
    // Lets go of control clients attached to another server than the one there.
    pid = await socketServerPid(ctx.runner, ctx.address, { signal: ctx.signal });
  } catch (error) {
    // No answer about the socket: the read stands.
    if (error instanceof TmuxError && error.kind !== "cancelled") return snapshot;
    throw error;
  }
  if (pid === (snapshot.server?.pid ?? null)) return snapshot;
  return pid === null ? NO_SERVER : await ctx.briefSnapshot({ processInfo: false });
}

// ---------------------------------------------------------------------------------------------
// get_server_info

/** get_server_info: the server this MCP server drives, and the pane it runs in. */
export const getServerInfo = defineTool({
  name: "get_server_info",
  title: "Server info",
  toolset: "inspect",
  description:
    "The tmux server: version, pid, socket path, counts, the pane this MCP server runs " +
    "in.",
  input: {},
  output: {
    running: z.boolean(),
    socket: z.string().describe(
      "Which server: the socket given, else the one TMUX names, else tmux's default socket.",
    ),
    socketPath: z.string().nullable(),
    pid: int().nullable(),
    version: z.string().nullable(),
    sessions: count(),
    windows: count(),
    panes: count(),
    clients: count().describe("Attached clients not in control mode: people."),
    controlClients: count().describe(
      "Control-mode clients attached (programs, this server's own connection among them).",
    ),
    watchedPanes: count().describe("Panes a person can see right now."),
    callerPaneId: z.string().nullable().describe("The pane this MCP server runs in, if known."),
    callerVia: z.enum(["TMUX_PANE", "parent-process"]).nullable(),
    callerReason: z.string(),
  },
  annotations: READ_ONLY,
  async run(_args, ctx) {
    const snapshot = await serverOnSocket(ctx);
    const caller = ctx.caller(snapshot);
    // Without -L/-S tmux reaches the server TMUX names, not the default socket: say which.
    const socket = describeServer(ctx.address, ctx.config.callerEnv.tmux);
    // A control-mode client without a terminal is a program (this server's own connection is
    // one), not a person; tmux -CC in a terminal is a person.
    const controlClients = snapshot.clients.filter((c) => !isPerson(c)).length;
    const data = {
      running: snapshot.running,
      socket,
      socketPath: snapshot.server?.socketPath ?? null,
      pid: snapshot.server?.pid ?? null,
      version: snapshot.server?.version ?? null,
      sessions: snapshot.sessions.length,
      windows: snapshot.windows.length,
      panes: snapshot.panes.length,
      clients: snapshot.clients.length - controlClients,
      controlClients,
      watchedPanes: ctx.attended(snapshot).size,
      callerPaneId: caller.paneId,
      callerVia: caller.via,
      callerReason: caller.reason,
    };
    return {
      data,
      summary: snapshot.running
        ? `tmux ${data.version} (pid ${data.pid}), ${socket}${
          data.socketPath && !socket.includes(data.socketPath) ? ` at ${data.socketPath}` : ""
        }: ${data.sessions} sessions, ${data.windows} windows, ${data.panes} panes, ${data.clients} clients (people), ${controlClients} programs in control mode.`
        : `No tmux server is running on ${socket}.`,
    };
  },
});

// ---------------------------------------------------------------------------------------------
// list_servers

/** How long a probe waits for one server: a dead socket answers at once, a stuck one never. */
const PROBE_TIMEOUT_MS = 2_000;

const serverEntry = z.strictObject({
  socket: z.string().describe("How to name it: socket name, path, or default."),
  socketName: z.string().nullable().describe("Pass as socket_name to reach it, when it has one."),
  socketPath: z.string().nullable(),
  running: z.boolean(),
  pid: int().nullable(),
  version: z.string().nullable(),
  sessions: count(),
  roles: z.array(z.enum(["configured", "default", "caller", "asked", "host"])).describe(
    "Why it was probed: the server this MCP server was started for, tmux's default, the one " +
      "named in TMUX, one the call asked about, or an SSH host's default.",
  ),
  host: z.string().optional().describe("The SSH host it runs on (pass as host)."),
  error: z.string().nullable().describe("Why it did not answer, when it did not."),
});

type ServerEntry = z.infer<typeof serverEntry>;

async function probe(ctx: TmuxContext, address: ServerAddress): Promise<ServerEntry> {
  const guard = newGuard();
  const base = {
    socket: address.socketPath ?? address.socketName ?? "default",
    socketName: address.socketPath ? null : (address.socketName ?? null),
    ...(address.host !== undefined && { host: address.host }),
  };
  try {
    const out = await ctx.runner.run(address, [
      "display-message",
      "-p",
      recordFormat(guard, ["#{socket_path}", "#{pid}", "#{version}"]),
      ";",
      "list-sessions",
      "-F",
      recordFormat(guard, ["#{session_id}"]),
    ], { timeoutMs: PROBE_TIMEOUT_MS, signal: ctx.signal });
    const records = parseRecords(out, guard);
    const [socketPath, pid, version] = records[0] ?? ["", "", ""];
    return {
      ...base,
      socketPath,
      running: true,
      pid: Number(pid) || null,
      version,
      sessions: records.length - 1,
      roles: [],
      error: null,
    };
  } catch (error) {
    if (!(error instanceof TmuxError)) throw error;
    if (error.kind === "cancelled") throw error;
    if (error.kind === "not-installed" && address.host === undefined) throw error;
    // A server with no sessions fails list-sessions after printing its facts.
    // The path whole: a -L name or TMUX_TMPDIR may hold spaces (cut there, two names read as
    // one socket and one of them went unlisted).
    const pathFromMessage = socketPathIn(error.message);
    return {
      ...base,
      socketPath: address.socketPath ?? pathFromMessage,
      running: false,
      pid: null,
      version: null,
      sessions: 0,
      roles: [],
      error: error.message,
    };
  }
}

/** list_servers: which tmux servers answer, and why each was asked. */
export const listServers = defineTool({
  name: "list_servers",
  title: "List tmux servers",
  toolset: "inspect",
  description: "Live tmux servers in reach, and those socketNames (-L) name.",
  input: {
    socketNames: z.array(socketNameField.unwrap()).max(32).optional(),
  },
  output: { servers: z.array(serverEntry) },
  annotations: READ_ONLY,
  async run(args, ctx) {
    const tmux = parseTmuxEnv(ctx.config.callerEnv.tmux);
    // A tmux started with no -L or -S reaches the server TMUX names, else the default socket:
    // probed (and named) as what it is.
    const { socketName, socketPath, host } = ctx.address;
    const tmuxChoice = socketName === undefined && socketPath === undefined && host === undefined;
    const candidates: { address: ServerAddress; role: ServerEntry["roles"][number] }[] = [
      {
        address: !tmuxChoice
          ? ctx.address
          : tmux
          ? { socketPath: tmux.socketPath }
          : { socketName: "default" },
        role: "configured",
      },
      { address: { socketName: "default" }, role: "default" },
    ];
    if (tmux) candidates.push({ address: { socketPath: tmux.socketPath }, role: "caller" });
    for (const name of args.socketNames ?? []) {
      candidates.push({ address: { socketName: name }, role: "asked" });
    }
    // Every SSH host's default server, and the asked names there too (a short probe each).
    for (const host of ctx.runner.hosts) {
      candidates.push({ address: { host }, role: "host" });
      for (const name of args.socketNames ?? []) {
        candidates.push({ address: { host, socketName: name }, role: "asked" });
      }
    }
    const probed = await Promise.all(candidates.map((c) => probe(ctx, c.address)));
    // Each probe reached the server its socket leads to now: control clients attached to
    // another (one that lost its socket file) are let go, so calls reach the same one.
    await Promise.all(
      probed.map((entry, i) =>
        entry.pid === null ? null : noteSocketServer(ctx.runner, candidates[i].address, entry.pid)
      ),
    );
    const servers: ServerEntry[] = [];
    probed.forEach((entry, i) => {
      const role = candidates[i].role;
      const same = servers.find((s) =>
        s.host === entry.host &&
        (entry.socketPath !== null ? s.socketPath === entry.socketPath : s.socket === entry.socket)
      );
      if (same) {
        if (!same.roles.includes(role)) same.roles.push(role);
        if (same.socketName === null && entry.socketName !== null) {
          same.socketName = entry.socketName;
        }
      } else servers.push({ ...entry, roles: [role] });
    });
    const live = servers.filter((s) => s.running).length;
    return {
      data: { servers },
      summary: `${live} of ${servers.length} probed socket${
        servers.length === 1 ? "" : "s"
      } have a running tmux server.`,
    };
  },
});
