/**
 * A new control client's attach: the `tmux -C attach-session` it is started as, and its
 * handshake once tmux has attached it: what it learns of its server (its client name, the
 * server's pid, what its attach did to its session's last use), the `exit-unattached`
 * subscription every client carries, and taking back the view-modes a person's hooks put on
 * panes as it attached (against each session's active pane and its modes, read just before the
 * attach). control_opening.ts runs it for each client.
 *
 * @module
 */

import { ControlUnavailable } from "./control_protocol.ts";
import type { Connection } from "./control_connection.ts";
import { subscribe } from "./control_feeds.ts";
import { OWN_TERM } from "./identity.ts";
import { type Touch, touched } from "./recency.ts";
import type { ControlResult } from "./control_protocol.ts";
import type { PersistentChild, TmuxRunner } from "./run.ts";
import type { ServerAddress } from "./server_address.ts";

/**
 * The format subscription every control client carries so that it hears `exit-unattached`
 * turned on: tmux sends no notification when an option changes, but it reports a
 * subscription's new value within a second.
 */
export const EXIT_UNATTACHED_SUBSCRIPTION = "tmux-mcp-exit-unattached";

/**
 * Starts a control client attaching to `sessionId`: one to carry watches (`forWatches`,
 * receiving its session's `%output`), or one for commands. The flags keep it out of a
 * person's way (see control_server.ts). Throws {@link ControlUnavailable} when tmux cannot
 * be started.
 */
export async function spawnClient(
  runner: TmuxRunner,
  address: ServerAddress,
  sessionId: string,
  forWatches: boolean,
): Promise<PersistentChild> {
  let child: PersistentChild;
  try {
    // -E: attaching would apply update-environment, putting this process's DISPLAY,
    // SSH_AUTH_SOCK and the like (or their absence) into the person's session.
    // no-output (commands only): tmux sends it no pane's output at all.
    // pause-after=1 (watches): tmux 3.3a stops reading a pane while a control client lags on
    // it only when no other client is ready for more, and ours for commands always is (a
    // person's terminal too): it then reads a flood at full speed and keeps it all for the
    // lagging client, in the person's server, megabytes a second for as long as a watch lasts.
    // Paused instead once a second behind, the pane's output held for it is dropped (`%pause`),
    // and the connection asks for it again (control_connection.ts's #resume). Output then comes
    // as `%extended-output` (control_protocol.ts reads both).
    // TERM: the mark by which another tmux-mcp process knows this client (identity.ts).
    child = await runner.spawnPersistent(address, [
      "-C",
      "attach-session",
      "-E",
      "-f",
      forWatches ? "ignore-size,pause-after=1" : "ignore-size,no-output",
      "-t",
      sessionId,
    ], { TERM: OWN_TERM });
  } catch (error) {
    throw new ControlUnavailable(error instanceof Error ? error.message : String(error));
  }
  return child;
}

/**
 * How long each read of {@link leaveHookModes} (and {@link modesBefore}, {@link jobsAndModes})
 * may take.
 */
const HOOK_READ = { timeoutMs: 2_000 };

/** How often {@link leaveHookModes} asks tmux whether the jobs it waits for have ended. */
const HOOK_JOBS_POLL_MS = 20;

/**
 * A pane where a hook's output may land, and its modes: the active pane of a session's
 * current window (`paneId`), its topmost mode (`top`: `view-mode`, `copy-mode`, ... or "" for
 * none) and how many modes are stacked there (`count`).
 */
export interface Landing {
  readonly paneId: string;
  readonly top: string;
  readonly count: number;
}

/**
 * Each session's {@link Landing} by session id, read just before a client of ours attaches:
 * what {@link leaveHookModes} holds the modes it reads later against. Null: not known (the read
 * failed), and then no mode is taken back.
 */
export type ModesBefore = ReadonlyMap<string, Landing> | null;

/**
 * Each session's {@link Landing}, a line each: tmux 3.3a shows a hook's `run-shell` output in
 * view-mode on the active pane of its client's session, and once the client has left (a
 * momentary client of ours, control_seating.ts's liftAfterAttach), on the pane of a client or
 * session tmux picks as best, not in the session the client joined. A line per session
 * whatever the panes, a command no other read of the attach makes.
 */
const MODES_READ: readonly string[] = [
  "list-sessions",
  "-F",
  "#{session_id} #{pane_id} #{pane_in_mode} #{pane_mode}",
];

/**
 * Each session's landing now (see {@link ModesBefore}), read by a tmux process of its own:
 * before a client of ours attaches there is no client of its own to ask over, and one of our
 * other clients may be held up behind a person's hook. One tmux command, once per client
 * opening. Null when tmux did not answer.
 */
export async function modesBefore(
  runner: TmuxRunner,
  address: ServerAddress,
): Promise<ModesBefore> {
  try {
    // aliasUnchecked: like the seating read, a read the opening a read of aliases may wait for.
    const result = await runner.exec(address, [...MODES_READ], {
      ...HOOK_READ,
      aliasUnchecked: true,
    });
    return result.code === 0 ? parseModes(result.stdout) : null;
  } catch {
    return null;
  }
}

/**
 * The pids of the jobs tmux runs now ({@link jobPids}) and each session's landing (see
 * {@link ModesBefore}), asked over `connection` in one step: before a momentary client attaches
 * (control_seating.ts's liftAfterAttach), and as {@link leaveHookModes} waits.
 */
export async function jobsAndModes(
  connection: Connection,
): Promise<{ jobs: Set<string>; modes: ModesBefore }> {
  const result = await connection.exec(
    ["show-messages", "-J", ";", ...MODES_READ],
    HOOK_READ,
  );
  return { jobs: jobPids(outputOf(result, 0) ?? result.stdout), modes: modesIn(result, 1) };
}

/** The output of the `index`th command of `result`'s line, or null when not told apart. */
function outputOf(result: ControlResult, index: number): Uint8Array | null {
  const ends = result.ends ?? [];
  const end = ends[index];
  const start = index === 0 ? 0 : ends[index - 1];
  if (end === undefined || end < 0 || start === undefined || start < 0) return null;
  return result.stdout.subarray(start, end);
}

/** The modes the `index`th command of `result`'s line, {@link MODES_READ}, told. */
function modesIn(result: ControlResult, index: number): ModesBefore {
  const output = outputOf(result, index);
  return output === null ? null : parseModes(output);
}

/** Parses what {@link MODES_READ} prints; a line of another shape is no session's. */
function parseModes(stdout: Uint8Array): Map<string, Landing> {
  const modes = new Map<string, Landing>();
  for (const line of new TextDecoder().decode(stdout).split("\n")) {
    const m = /^(\$\d+) (%\d+) (\d+) ([\w-]*)$/.exec(line);
    if (m) modes.set(m[1], { paneId: m[2], count: Number(m[3]), top: m[4] });
  }
  return modes;
}

/**
 * The jobs an attach's hooks started, as {@link leaveHookModes} waits for them: `running`, those
 * listed so far; `known`, every job tmux listed then (theirs or not: a job not among them is
 * new); `clientPid`, the attaching client's pid when known (see {@link startedSince}); `modes`,
 * each session's landing read in the same step.
 */
export interface AttachJobs {
  readonly running: Set<string>;
  readonly known: Set<string>;
  readonly clientPid?: string;
  readonly modes: ModesBefore;
}

/**
 * Learns the new client's name and what its attach did to its session's last use (into
 * `touches`, its server's). Without an answer nothing is recorded (the session is then never
 * moved back on top for it).
 *
 * In the same round trip it lists tmux's running jobs and each session's landing, and returns the
 * jobs started since the client ({@link startedSince}) for {@link leaveHookModes} (null when
 * unknown), and learns the
 * window its format subscriptions hang on (control_feeds.ts's subscribe). Then the client
 * subscribes to `exit-unattached`: turned on while only our clients are attached, tmux would
 * exit at once without us, so ours must leave then (control_leaving.ts's #leaveIfLast), not
 * only when a client detaches; and tmux tells no option's change.
 */
export async function noteAttach(
  connection: Connection,
  before: number | undefined,
  touches: Map<string, Touch>,
): Promise<AttachJobs | null> {
  try {
    const result = await connection.exec(
      [
        "display-message",
        "-p",
        "#{client_name}\t#{session_id}\t#{session_activity}\t#{pid}\t#{window_id}\t#{client_pid}",
        ";",
        "show-messages",
        "-J",
        ";",
        ...MODES_READ,
      ],
      { timeoutMs: 5_000 },
    );
    const [name, sessionId, activity, pid, windowId, clientPid] = new TextDecoder().decode(
      result.stdout,
    ).split("\n")[0].split("\t");
    const listed = result.ends?.length === 3 ? outputOf(result, 1) : null;
    const known = listed === null ? null : jobPids(listed);
    const jobs = known === null ? null : {
      running: new Set([
        ...startedSince(known, clientPid),
        ...known.has(DEAD_JOB) ? [DEAD_JOB] : [],
      ]),
      known,
      clientPid,
      modes: modesIn(result, 2),
    };
    // The server it attached to, for commands meant for one server (ServerControl.exec).
    if (result.code === 0 && /^[1-9]\d*$/.test(pid ?? "")) {
      connection.serverPid ??= Promise.resolve(Number(pid));
    }
    if (result.code === 0 && sessionId === connection.sessionId && /^@\d+$/.test(windowId ?? "")) {
      connection.anchor ||= windowId;
    }
    subscribe(connection, EXIT_UNATTACHED_SUBSCRIPTION, "#{exit-unattached}").catch(() => {});
    if (result.code !== 0 || !/^\d+$/.test(activity ?? "")) return jobs;
    connection.clientName = name;
    if (before === undefined || sessionId !== connection.sessionId) return jobs;
    touches.set(sessionId, touched(touches.get(sessionId), before, +activity));
    return jobs;
  } catch {
    // Lost meanwhile: whoever uses it next finds out.
    return null;
  }
}

/**
 * Takes back what a person's hooks did to the panes as `connection` attached (or, `lift`, a
 * momentary client of ours, control_seating.ts's liftAfterAttach). `client-attached`,
 * `client-session-changed` and `pane-focus-in` hooks run for our client too, and tmux 3.3a
 * shows a hook's `run-shell` output in view-mode on the active pane of the client's session,
 * or, once the client has left, of the client or session tmux picks as best (a person's,
 * often). "welcome back", meant for a person attaching, would cover what a person there is
 * looking at, and every input tool would refuse the pane (a pane in a mode).
 *
 * tmux lists a job until it has ended and its output is placed (its pid shown as -1 once its
 * process exited while its output is still read: {@link DEAD_JOB}): once the jobs the attach
 * started are over (waited for `waitMs` at most, and no longer once `closed()`), every
 * view-mode a hook of the attach put on a pane is there (`listed`: the jobs {@link noteAttach}
 * saw started since its client, or null to ask, less `older`, the jobs running before the
 * attach). tmux runs hooks in one queue, a `run-shell` holding it until its job ends: the jobs
 * of an attach's hooks (`client-session-changed`, then `client-attached`) run one after the
 * other. So a job new to the list in the read where one waited for has ended is the next
 * hook's, waited for too (a job of the person's that happens to start then costs a wait within
 * the bound). Each read waits twice as long as the one before took, 20 ms at least: a job list
 * made huge by a program in a pane is not read back to back.
 *
 * The queue held, tmux's notices of a change of mode wait behind the job too (a person's own
 * `run-shell` meanwhile is told only at its end), and a program can forge them (what a hook
 * prints with `display-message -p` reaches a control client of ours bare). So the modes are
 * read with the jobs, where a hook's output lands: the active pane of `connection`'s session,
 * or with `lift` of every session. Such a pane is taken for the hooks' when a view-mode was
 * pushed on it (one mode more, view-mode on top) at the first read against `before`
 * ({@link modesBefore}, read just before the attach: a job that ended at once), or in a read
 * where a job waited for ended against the read before. A view-mode the person opens while the
 * attach's jobs run on, or on a pane no hook of ours lands on, is theirs; so is their own
 * view-mode raised above their copy mode for a hook's line (no mode more). Each pane taken is
 * left in one step in tmux that checks the mode (`send-keys -X cancel` leaves the topmost mode
 * only: a copy mode of the person's beneath stays). With `before` or the first read unknown
 * (null), nothing is left. Best effort: never throws.
 */
export async function leaveHookModes(
  connection: Connection,
  listed: AttachJobs | null,
  before: ModesBefore,
  waitMs: number,
  closed: () => boolean,
  older: ReadonlySet<string> = new Set(),
  lift = false,
): Promise<void> {
  try {
    const until = performance.now() + waitMs;
    const jobs = listed ?? await attachJobs(connection, older);
    if (before === null || jobs.modes === null) return;
    const landings = (modes: ReadonlyMap<string, Landing>) =>
      lift ? [...modes.values()] : [modes.get(connection.sessionId)].filter((l) => l !== undefined);
    const ours = new Set<string>();
    const take = (then: ReadonlyMap<string, Landing>, now: ReadonlyMap<string, Landing>) => {
      for (const landing of landings(now)) {
        if (pushedView(then, landing)) ours.add(landing.paneId);
      }
    };
    take(before, jobs.modes);
    let last = jobs.modes;
    let running = jobs.running;
    const known = new Set([...jobs.known, ...older]);
    let tookMs = 0;
    while (running.size > 0 && performance.now() < until && !closed()) {
      await new Promise((resolve) => setTimeout(resolve, Math.max(HOOK_JOBS_POLL_MS, 2 * tookMs)));
      const asked = performance.now();
      const { jobs: now, modes } = await jobsAndModes(connection);
      tookMs = performance.now() - asked;
      const next = new Set([...running].filter((pid) => now.has(pid) || now.has(DEAD_JOB)));
      if (next.size < running.size) {
        if (modes !== null) take(last, modes);
        const started = [...now].filter((pid) => !known.has(pid));
        for (const pid of startedSince(new Set(started), jobs.clientPid)) next.add(pid);
      }
      last = modes ?? last;
      for (const pid of now) known.add(pid);
      running = next;
    }
    for (const paneId of ours) {
      if (connection.closed) return;
      await connection.exec([
        "if-shell",
        "-F",
        "-t",
        paneId,
        "#{==:#{pane_mode},view-mode}",
        `send-keys -X -t ${paneId} cancel`,
      ], HOOK_READ);
    }
  } catch {
    // Lost meanwhile: whoever uses it next finds out.
  }
}

/**
 * Whether `now` shows a view-mode pushed on its pane since `then` (the pane a landing there
 * too): view-mode on top, and one mode more than it had. A pane that was no landing in `then`
 * (another window or pane made active since) is not judged.
 */
function pushedView(then: ReadonlyMap<string, Landing>, now: Landing): boolean {
  const was = [...then.values()].find((l) => l.paneId === now.paneId);
  return was !== undefined && now.top === "view-mode" && now.count > was.count;
}

/** The jobs running now but those in `older`, as the attach's (see {@link AttachJobs}). */
async function attachJobs(connection: Connection, older: ReadonlySet<string>): Promise<AttachJobs> {
  const { jobs: known, modes } = await jobsAndModes(connection);
  return { running: new Set([...known].filter((pid) => !older.has(pid))), known, modes };
}

/**
 * Of `jobs`, those tmux started after the client whose pid is `clientPid` (a decimal number,
 * else every job): the jobs its attach's hooks and its handshake's commands started. tmux forks
 * them once the client is there, and Linux and macOS hand pids out in order, so theirs are
 * higher, and only a little ({@link ATTACH_PID_SPAN}: the forks of the moments between). A job
 * that ran before (a person's `run-shell`, a status line's `#()` sampling for a second or two)
 * is no hook's of the attach: waiting for it held every new client (a first call, a watch in
 * another session) for the whole bound, and took the view-mode its output opened on a person's
 * pane when it ended meanwhile. Its pid is lower, or, where pids wrapped since (every 32 768
 * forks where pid_max is that, as on many Linux systems), far higher. Where pids wrap between
 * the client and a hook's job, or are handed out at random, a job may still be judged wrongly
 * either way: waited for up to the bound as before, or a hook's view-mode left, as when a
 * hook's job outlasts the bound.
 */
export function startedSince(jobs: Set<string>, clientPid: string | undefined): Set<string> {
  if (!/^[1-9]\d{0,9}$/.test(clientPid ?? "")) return jobs;
  const client = Number(clientPid);
  return new Set(
    [...jobs].filter((job) => Number(job) > client && Number(job) - client <= ATTACH_PID_SPAN),
  );
}

/**
 * How far above a client's pid the pids of the jobs its attach started may be: the forks of the
 * whole machine in the moments between (a few, or hundreds on a busy one), with room to spare;
 * far below the span pids wrap in (at least 32 768 on Linux), so a job from before a wrap,
 * whose pid is near the top, is not taken for one.
 */
export const ATTACH_PID_SPAN = 4_096;

/**
 * The pids of the jobs `show-messages -J` lists (`Job 3: <command> [fd=9, pid=123, status=0]`):
 * the command is the person's, any text, so only the bracket that ends a line counts.
 */
function jobPids(stdout: Uint8Array): Set<string> {
  const pids = new Set<string>();
  for (const line of new TextDecoder().decode(stdout).split("\n")) {
    const m = /\[fd=-?\d+, pid=(\d+|-1), status=-?\d+\]$/.exec(line);
    if (m) pids.add(m[1]);
  }
  return pids;
}

/**
 * What {@link jobPids} lists for a job whose process has exited while its output is still being
 * read (tmux shows its pid as -1 then): its output is placed, and its view-mode opened, only
 * once its pipe ends, so while one is listed no job waited for counts as over (which one it is
 * cannot be told).
 */
const DEAD_JOB = "-1";
