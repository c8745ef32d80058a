/**
 * The tmux server the fuzz (scripts/fuzz.ts) calls tools against, and what it watches there.
 *
 * The server holds the shapes the guards must get right, all at once: a pane the MCP server
 * runs in (the agent's), a dead pane kept by remain-on-exit, a pane in copy mode, a zoomed
 * window, a window linked into two sessions, a grouped session, a window one column wide
 * holding wide characters, names with spaces, quotes and non-ASCII letters, paste buffers with
 * awkward names. A person is attached on a real
 * pseudo-terminal, in one of three flavours of what they look at (each a layout in which a
 * guard once missed): a zoomed pane of two; a window linked into another session and viewed
 * through a grouped session, its active pane in copy mode; a synchronized window whose active
 * pane is dead, seen through a window of a grouped session. Their status line runs a job that
 * is always running, as a gauge's does. A world runs under tmux's defaults or under a person's
 * `tmux.conf` ({@link PERSON_CONF}: numbering from 1, renumbering, border lines, hooks;
 * {@link KEEPER_CONF}: panes and servers kept, no history, no status line; or
 * {@link HOOKED_CONF}: hooks that run shell jobs as clients attach and move).
 *
 * Everything runs inside the folder it is given: the server's working directory, every pane's
 * (unless a tool names another), `HOME`, and `/bin/sh` as the default shell, so that a random
 * command line typed into a pane writes nowhere else.
 *
 * @module
 */

import { TestTmux, waitFor } from "./tmux.ts";
import { baseName, reachesNoPerson, STATUS_ENTRY_OPTIONS } from "../../src/tmux/option_reach.ts";

/** How many flavours of the person's view {@link buildWorld} knows. */
export const FLAVOURS = 3;

/**
 * The tmux configurations a world may run under: 0, tmux's own defaults; 1, a person's
 * `tmux.conf` ({@link PERSON_CONF}); 2, a keeper's ({@link KEEPER_CONF}); 3, one whose hooks
 * run shell jobs ({@link HOOKED_CONF}). Each is sourced before anything but the first session
 * is made.
 */
export const CONFIGS = 4;

/**
 * The `tmux.conf` of a person who keeps everything and sees little: panes stay when their
 * program exits, the server when its last session goes, a client when its session is killed (it
 * moves to another); no history at all, no alternate screen, no status line, windows sized to
 * the smallest client, names left as given, and a hook on every pane that dies.
 */
export const KEEPER_CONF = [
  "set -g remain-on-exit on",
  "set -s exit-empty off",
  "set -g detach-on-destroy off",
  "set -g history-limit 0",
  "setw -g alternate-screen off",
  "set -g status off",
  "setw -g window-size smallest",
  "setw -g automatic-rename off",
  "set -g renumber-windows on",
  `set-hook -g pane-died 'display-message "#{pane_id} died"'`,
  "",
].join("\n");

/**
 * A person's `tmux.conf`, of the settings found in most: windows and panes numbered from 1
 * and renumbered as windows close, vi keys, a long history, the mouse, titles and renames
 * from what panes print, a border line above every pane (one row less of each pane, and its
 * command shown), another prefix, activity watched, and the hooks people write to keep their
 * layouts tidy and to be greeted. What the tools read, where they type and what they say must
 * hold under it as under tmux's defaults.
 */
export const PERSON_CONF = [
  "set -g base-index 1",
  "setw -g pane-base-index 1",
  "set -g renumber-windows on",
  "set -g mode-keys vi",
  "set -g status-keys vi",
  "set -g history-limit 50000",
  "set -s escape-time 0",
  "set -g mouse on",
  "set -g focus-events on",
  "set -g set-titles on",
  "set -g set-titles-string '#S:#I #W'",
  "set -g allow-rename on",
  "setw -g automatic-rename-format '#{pane_current_command}:#{b:pane_current_path}'",
  "setw -g aggressive-resize on",
  "setw -g monitor-activity on",
  "set -g visual-activity off",
  "set -g prefix C-a",
  "unbind C-b",
  "bind C-a send-prefix",
  "set -g default-terminal tmux-256color",
  "set -g word-separators ' -_@'",
  "setw -g pane-border-status top",
  "setw -g pane-border-format ' #{pane_index} #{pane_current_command} '",
  "set -g status-left '[#S] '",
  "set -g @plugin 'tmux-plugins/tpm'",
  "set-hook -g after-split-window 'select-layout -E'",
  "set-hook -g after-kill-pane 'select-layout -E'",
  `set-hook -g client-attached 'display-message "hello #{client_name}"'`,
  "set-hook -g session-created 'set -gF @last-made \"#{hook_session_name}\"'",
  "",
].join("\n");

/** What the jobs of {@link HOOKED_CONF}'s hooks print first: tmux lists a job by its command. */
const HOOK_JOB = "hook-job:";

/**
 * The `tmux.conf` of a person whose hooks run shell jobs as a client attaches and as it changes
 * session (a greeting, a theme or plugin script): tmux runs them for every client, control
 * clients too, one after the other, and shows what they print in view-mode on the session's
 * active pane. Our clients' attaches wait for such jobs, and a job that outlived a client of
 * ours once crashed tmux when the client's session went (control_leave.ts).
 */
export const HOOKED_CONF = [
  `set-hook -g client-attached 'run-shell "sleep 0.4; echo ${HOOK_JOB} welcome #{client_name}"'`,
  `set-hook -g client-session-changed 'run-shell "sleep 0.3; echo ${HOOK_JOB} in #{session_name}"'`,
  "",
].join("\n");

/** The server and the ids of what it holds. */
export interface FuzzWorld {
  readonly t: TestTmux;
  /** Which of the {@link FLAVOURS} the person's view is. */
  readonly flavour: number;
  /** Which of the {@link CONFIGS} tmux runs under. */
  readonly config: number;
  /** The server's pid and socket file, as `TMUX` carries them to the MCP server. */
  readonly pid: string;
  readonly socketPath: string;
  /** The person's client, and what it shows when the world is built. */
  readonly personTty: string;
  readonly personSession: string;
  readonly personWindow: string;
  /** The panes of the person's window (whose content must not change). */
  readonly personPanes: readonly string[];
  /** The pane the MCP server says it runs in (`TMUX_PANE`), and its session. */
  readonly agentPane: string;
  readonly agentSession: string;
  readonly deadPane: string;
  readonly copyPane: string;
  /** A window linked into two sessions (and zoomed, with nobody looking at it). */
  readonly linkedWindow: string;
}

/**
 * What every process of a world running in `dir` gets besides the caller's environment: a home
 * of its own, a plain shell. A server a tool starts on another socket inherits it from the
 * server process, which therefore gets it too.
 */
export function worldEnv(dir: string): Record<string, string> {
  return { HOME: dir, SHELL: "/bin/sh" };
}

/**
 * Builds a new world on a new private server, running in `dir`, under one of the
 * {@link CONFIGS}.
 */
export async function buildWorld(
  flavour: number,
  dir: string,
  config = 0,
): Promise<FuzzWorld> {
  const t = new TestTmux({ cwd: dir, env: worldEnv(dir) });
  try {
    return await populate(t, flavour, config, dir);
  } catch (error) {
    await t.kill();
    throw error;
  }
}

async function populate(
  t: TestTmux,
  flavour: number,
  config: number,
  dir: string,
): Promise<FuzzWorld> {
  const fmt = "#{pane_id} #{window_id} #{session_id}";
  // -P -F go before the command a pane runs, which ends the flags.
  const ids = async (command: string, ...args: string[]) =>
    (await t.tmux(command, "-P", "-F", fmt, ...args)).trim().split(" ");
  // Dead, and saying so: tmux 3.3a may miss the exited process's SIGCHLD until another child
  // of the server exits (then it learns the status and writes "Pane is dead" into the pane,
  // in the middle of the run): it is given one.
  const paneDies = (paneId: string) =>
    waitFor(async () => {
      const [dead, status] = (await t.tmux(
        "display-message",
        "-p",
        "-t",
        paneId,
        "#{pane_dead} #{pane_dead_status}",
      )).trim().split(" ");
      if (dead === "1" && status) {
        return (await t.tmux("capture-pane", "-p", "-t", paneId)).includes("Pane is dead");
      }
      await t.tmux("if-shell", "true", "");
      return false;
    }, `${paneId} dead, with its status`);

  const [mainPane] = await ids("new-session", "-d", "-s", "main", "-x", "80", "-y", "24", "sh");
  if (config > 0) {
    const conf = `${dir}/tmux.conf`;
    await Deno.writeTextFile(conf, [PERSON_CONF, KEEPER_CONF, HOOKED_CONF][config - 1]);
    await t.tmux("source-file", conf);
  }
  await t.prompt(mainPane);
  const [p1, pw] = await ids("new-session", "-d", "-s", "person", "-x", "80", "-y", "24", "cat");
  const [p2] = await ids("split-window", "-d", "-t", p1, "cat");
  await t.tmux("new-window", "-d", "-t", "person:", "-n", "bg", "sh");
  const [w0p, w0] = await ids("new-session", "-d", "-s", "work", "-x", "100", "-y", "30", "sh");
  await t.tmux("split-window", "-d", "-t", w0p, "sh");
  await t.tmux("split-window", "-d", "-h", "-t", w0p, "sh");
  await t.tmux("resize-pane", "-Z", "-t", w0p);
  const [dead] = await ids("new-window", "-d", "-t", "work:", "-n", "dead", "read x; exit 3");
  await t.tmux("set-option", "-w", "-t", dead, "remain-on-exit", "on");
  await t.tmux("send-keys", "-t", dead, "Enter");
  await paneDies(dead);
  const [copy] = await ids("new-window", "-d", "-t", "work:", "-n", "copy me", "sh");
  await t.prompt(copy);
  await t.tmux("send-keys", "-t", copy, "seq 1 200", "Enter");
  await waitFor(
    async () => (await t.tmux("capture-pane", "-p", "-t", copy)).includes("200"),
    "seq",
  );
  await t.tmux("copy-mode", "-t", copy);
  const [agent, , agentSession] = await ids(
    "new-window",
    "-d",
    "-t",
    "work:",
    "-n",
    "agent",
    "cat",
  );
  // A window one column wide, narrowed after its pane printed wide characters: tmux 3.3a then
  // pads each of them with a row that prints nothing (a 1-column pane is what a layout or a
  // resize may leave, and a reader once failed on it).
  const [narrow, narrowWindow] = await ids(
    "new-window",
    "-d",
    "-t",
    "work:",
    "-n",
    "narrow",
    "printf 'ｗｉｄｅ 😀 é\\nnext ｗ\\n\\n'; exec cat",
  );
  await waitFor(
    async () => (await t.tmux("capture-pane", "-p", "-t", narrow)).includes("next"),
    "the narrow pane's lines",
  );
  await t.tmux("resize-window", "-t", narrowWindow, "-x", "1");
  await t.tmux("link-window", "-d", "-s", w0, "-t", "main:5");
  await t.tmux("new-session", "-d", "-t", "work", "-s", "grp");
  await t.tmux("new-session", "-d", "-s", "sp ace 'q' ü", "sh");
  await t.tmux("set-buffer", "-b", "buf one", "hello");
  await t.tmux("set-buffer", "-b", "b;2", "echo x");

  let personPanes = [p1, p2];
  let personTarget = "person";
  if (flavour === 0) {
    await t.tmux("resize-pane", "-Z", "-t", p1);
  } else if (flavour === 1) {
    await t.tmux("new-session", "-d", "-t", "person", "-s", "pgrp");
    await t.tmux("link-window", "-d", "-s", pw, "-t", "main:7");
    await t.tmux("send-keys", "-t", p1, "-l", "hello person");
    await t.tmux("copy-mode", "-t", p1);
  } else {
    const [q1, qw] = await ids(
      "new-window",
      "-d",
      "-t",
      "work:",
      "-n",
      "shared w",
      "read x; exit 4",
    );
    await t.tmux("set-option", "-w", "-t", q1, "remain-on-exit", "on");
    const [q2] = await ids("split-window", "-d", "-t", q1, "cat");
    await t.tmux("send-keys", "-t", q1, "Enter");
    await paneDies(q1);
    await t.tmux("set-option", "-w", "-t", qw, "synchronize-panes", "on");
    await t.tmux("select-window", "-t", `grp:${qw}`);
    personPanes = [q1, q2];
    personTarget = "grp";
  }
  // The person's status line runs a job that samples for two seconds, as CPU and memory gauges
  // do, every second: tmux lists a job of theirs at every moment, as every control client of
  // the MCP server attaches (whose handshake waits for the jobs its own attach started).
  await t.tmux("set-option", "-g", "status-interval", "1");
  await t.tmux("set-option", "-g", "status-right", "#(sleep 2; echo gauge)");
  const personTty = await t.attach(personTarget);
  // A program's control client (a dashboard, an editor's integration): it holds a place in the
  // output of every pane its session shows, and of every pane whose window left that session.
  // In one world of three it stopped reading (hung), and tmux falls behind on all of them.
  t.controlClient("work", undefined, { reading: flavour !== 1 });
  if (config === 3) {
    // Their own attach's jobs, and the program's, end before the world is looked at: what
    // they print is part of what the person sees from then on.
    await waitFor(
      async () => !(await t.tmux("show-messages", "-J")).includes(HOOK_JOB),
      "the jobs of the hooks the attaches ran",
    );
  }
  const [pid, socketPath] = (await t.tmux("display-message", "-p", "#{pid}\t#{socket_path}"))
    .trim().split("\t");
  const client = (await t.tmux("list-clients", "-F", "#{client_tty} #{session_id} #{window_id}"))
    .split("\n").find((l) => l.startsWith(`${personTty} `))!.split(" ");
  return {
    t,
    flavour,
    config,
    pid,
    socketPath,
    personTty,
    personSession: client[1],
    personWindow: client[2],
    personPanes,
    agentPane: agent,
    agentSession,
    deadPane: dead,
    copyPane: copy,
    linkedWindow: w0,
  };
}

/** What the person sees, and the panes of the window they look at. */
export interface PersonView {
  /**
   * Text that changes when what they see does: their client's session, window, active pane,
   * zoom, layout and mode, each visible pane's size, state and screen, and what all that is set
   * to ({@link personSettings}).
   */
  readonly text: string;
  /** Every pane of that window, seen or hidden by a zoom. */
  readonly windowPanes: readonly string[];
}

/** What the person sees; null when they are gone (their client, or the whole server). */
export async function personView(w: FuzzWorld): Promise<PersonView | null> {
  const clients = await w.t.tmuxRaw(
    "list-clients",
    "-F",
    "#{client_tty}\t#{session_id}\t#{window_id}\t#{pane_id}\t#{window_zoomed_flag}\t" +
      "#{window_layout}\t#{pane_in_mode}\t#{window_width}x#{window_height}",
  );
  if (clients.code !== 0) return null;
  const line = clients.stdout.split("\n").find((l) => l.startsWith(`${w.personTty}\t`));
  if (!line) return null;
  const [, session, window, pane, zoomed] = line.split("\t");
  const windowPanes = (await w.t.tmuxRaw("list-panes", "-t", window, "-F", "#{pane_id}")).stdout
    .split("\n").filter((l) => l);
  const shown = zoomed === "1" ? [pane] : windowPanes;
  let text = `${line}\n--settings\n${await personSettings(w, session, window, shown)}`;
  for (const p of shown) {
    const screen = await w.t.tmuxRaw("capture-pane", "-p", "-t", p);
    const state = await w.t.tmuxRaw(
      "display-message",
      "-p",
      "-t",
      p,
      "#{pane_width}x#{pane_height} #{pane_dead} #{pane_in_mode}",
    );
    text += `\n--${p} ${state.stdout.trim()}\n${screen.stdout}`;
  }
  return { text, windowPanes };
}

/**
 * The options of what the person is shown, one `scope: name value` line each: their session's,
 * their window's, the global and server ones, each pane's of `panes` that is there, and the
 * status line entry options of their session's other windows. Left out: user options (the
 * server's own marks among them) and the server options that reach nobody, which the guard lets
 * pass (src/tmux/option_reach.ts); `automatic-rename`, which rename_window turns off (a rename
 * is no view change the server or the guard holds back); and a window's own `window-size`,
 * which tmux's resize-window sets to manual (a reshape: the guard leaves it, README says so).
 */
export async function personSettings(
  w: FuzzWorld,
  session: string,
  window: string,
  panes: readonly string[],
): Promise<string> {
  const others = (await w.t.tmuxRaw("list-windows", "-t", session, "-F", "#{window_id}")).stdout
    .split("\n").filter((o) => o !== "" && o !== window);
  const scopes: [string, string[], ReadonlySet<string>?][] = [
    ["session", ["-t", session]],
    [`window ${window}`, ["-w", "-t", window]],
    ["global", ["-g"]],
    ["global window", ["-gw"]],
    ["server", ["-s"]],
    ...panes.map((p): [string, string[]] => [`pane ${p}`, ["-p", "-t", p]]),
    ...others.map((o): [string, string[], ReadonlySet<string>] => [
      `window ${o}`,
      ["-w", "-t", o],
      STATUS_ENTRY_OPTIONS,
    ]),
  ];
  const kept = (scope: string, line: string, only?: ReadonlySet<string>) => {
    const base = baseName(line.split(" ")[0]);
    return line !== "" && !reachesNoPerson(base) && base !== "automatic-rename" &&
      !(base === "window-size" && scope.startsWith("window @")) && (!only || only.has(base));
  };
  // One tmux process for all of them, each scope's lines after a line of its own (`=3`: no
  // option line starts so); a pane gone meanwhile fails the whole chain: then one by one.
  const chain = await w.t.tmuxRaw(
    ...scopes.flatMap(([, flags], i) => [
      ...i > 0 ? [";"] : [],
      ...["display-message", "-p", `=${i}`, ";", "show-options", ...flags],
    ]),
  );
  const lines: string[] = [];
  if (chain.code === 0) {
    let at = -1;
    for (const line of chain.stdout.split("\n")) {
      const mark = /^=(\d+)$/.exec(line);
      if (mark) at = Number(mark[1]);
      else if (at >= 0 && kept(scopes[at][0], line, scopes[at][2])) {
        lines.push(`${scopes[at][0]}: ${line}`);
      }
    }
    return lines.join("\n");
  }
  for (const [scope, flags, only] of scopes) {
    const r = await w.t.tmuxRaw("show-options", ...flags);
    if (r.code !== 0) continue;
    for (const line of r.stdout.split("\n")) {
      if (kept(scope, line, only)) lines.push(`${scope}: ${line}`);
    }
  }
  return lines.join("\n");
}

/**
 * The text of a pane, history included, wrapped lines joined and without trailing blanks (nor
 * the lines `drop` says): a resize or a move (which a tool may do) wraps its lines anew and
 * moves some in or out of the history, and changes nothing of that; a keystroke changes the
 * text. Null when the pane cannot be read.
 */
export async function paneText(
  t: TestTmux,
  paneId: string,
  drop: (line: string) => boolean = () => false,
): Promise<string | null> {
  const capture = await t.tmuxRaw("capture-pane", "-p", "-J", "-S", "-", "-t", paneId);
  return capture.code === 0 ? captureText(capture.stdout, drop) : null;
}

/** A `capture-pane -p -J` as {@link paneText} gives it. */
export function captureText(
  stdout: string,
  drop: (line: string) => boolean = () => false,
): string {
  return stdout.split("\n").map((l) => l.trimEnd()).filter((l) => !drop(l)).join("\n").trim();
}

/** The text of the agent's own pane ({@link paneText}; empty when it cannot be read). */
export async function agentView(w: Pick<FuzzWorld, "t" | "agentPane">): Promise<string> {
  return await paneText(w.t, w.agentPane) ?? "";
}

/** The names of every session and window (a call may have named one "undefined"). */
export async function worldNames(w: FuzzWorld): Promise<string[]> {
  const res = await w.t.tmuxRaw("list-windows", "-a", "-F", "#{session_name}\n#{window_name}");
  return res.code === 0 ? [...new Set(res.stdout.split("\n").filter((l) => l))] : [];
}

/**
 * Makes tmux take the exit of every pane's process that ended unseen. tmux 3.3a leaves about
 * one in five processes that exit at once (a split whose command is not found) as zombies,
 * their panes dead with no exit status, until another child of the server exits: only then does
 * a kept pane get its `Pane is dead` line, whose line feed scrolls the pane's rows up (with
 * `history-limit 0`, the top row is gone). Where no status line job runs (the keeper's
 * configuration), that may come during any later call, which touched nothing. A `run-shell`
 * job is such a child.
 */
export async function reapExited(w: Pick<FuzzWorld, "t">): Promise<void> {
  const unreaped = async () => {
    const dead = await w.t.tmuxRaw(
      "list-panes",
      "-a",
      "-F",
      "#{pane_dead}:#{pane_dead_status}#{pane_dead_signal}",
    );
    return dead.code === 0 && dead.stdout.split("\n").includes("1:");
  };
  // In the background, looked at after: tmux may miss this child's exit too (the next one's
  // reaps both), and a `run-shell` waited on would then hang. Two seconds at most.
  const until = Date.now() + 2_000;
  while (await unreaped() && Date.now() < until) {
    await w.t.tmuxRaw("run-shell", "-b", "true");
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The tmux server's pid, or null when nothing answers on the socket. */
export async function serverPid(w: FuzzWorld): Promise<string | null> {
  const r = await w.t.tmuxRaw("display-message", "-p", "#{pid}");
  return r.code === 0 ? r.stdout.trim() : null;
}

/** The ids and names that exist now: where the arguments' ids are drawn from. */
export interface Present {
  panes: string[];
  windows: string[];
  sessions: string[];
  names: string[];
  buffers: string[];
}

/** What {@link Present} lists, read from tmux. */
export async function present(w: FuzzWorld): Promise<Present> {
  const res = await w.t.tmuxRaw(
    "list-panes",
    "-a",
    "-F",
    "#{pane_id}\t#{window_id}\t#{session_id}\t#{session_name}",
  );
  const rows = res.code === 0
    ? res.stdout.split("\n").filter((l) => l).map((l) => l.split("\t"))
    : [];
  const column = (i: number) => [...new Set(rows.map((row) => row[i]))];
  const buffers = await w.t.tmuxRaw("list-buffers", "-F", "#{buffer_name}");
  return {
    panes: column(0),
    windows: column(1),
    sessions: column(2),
    names: column(3),
    buffers: buffers.code === 0 ? buffers.stdout.split("\n").filter((l) => l) : [],
  };
}
