import assert from "node:assert/strict";
import {
  attendedPanes,
  findCallerPane,
  isOwnKind,
  isPerson,
  OWN_TERM,
  parseTmuxEnv,
} from "./identity.ts";
import { type ClientRow, FULL_SCOPE, type PaneRow, type Snapshot } from "./snapshot.ts";

Deno.test("parseTmuxEnv takes the last two fields as numbers, so paths may hold commas", () => {
  assert.deepEqual(parseTmuxEnv("/tmp/tmux-1000/default,1234,0"), {
    socketPath: "/tmp/tmux-1000/default",
    pid: 1234,
  });
  assert.deepEqual(parseTmuxEnv("/tmp/a,b/sock,99,3"), { socketPath: "/tmp/a,b/sock", pid: 99 });
  assert.equal(parseTmuxEnv(undefined), null);
  assert.equal(parseTmuxEnv("garbage"), null);
  assert.equal(parseTmuxEnv(",1,2"), null);
});

function pane(id: string, windowId: string, pid: number, sessions = ["$0"]): PaneRow {
  const placements = sessions.map((sessionId) => ({ sessionId }));
  return { id, windowId, pid, placements } as unknown as PaneRow;
}

function client(windowId: string, paneId: string, extra: Partial<ClientRow> = {}): ClientRow {
  return {
    windowId,
    paneId,
    controlMode: false,
    zoomed: false,
    previewing: false,
    tty: "/dev/pts/9",
    name: "c",
    ...extra,
  } as ClientRow;
}

function snap(panes: PaneRow[], clients: ClientRow[] = []): Snapshot {
  return {
    running: true,
    server: { socketPath: "/tmp/tmux-0/x", pid: 50, startTime: 1_796_000_000, version: "3.3a" },
    sessions: [],
    windows: [],
    panes,
    clients,
    scope: FULL_SCOPE,
  };
}

Deno.test("the caller pane needs TMUX to name this very server: socket and pid", () => {
  const s = snap([pane("%1", "@1", 100), pane("%2", "@1", 200)]);
  assert.equal(findCallerPane(s, { tmux: "/tmp/tmux-0/x,50,0", tmuxPane: "%2" }).paneId, "%2");
  // Same pane id on another server: not ours.
  assert.equal(findCallerPane(s, { tmux: "/tmp/tmux-0/y,50,0", tmuxPane: "%2" }).paneId, null);
  // Same socket, restarted server (other pid): pane ids were reused for other panes.
  assert.equal(findCallerPane(s, { tmux: "/tmp/tmux-0/x,51,0", tmuxPane: "%2" }).paneId, null);
  // A pane that is gone.
  const gone = findCallerPane(s, { tmux: "/tmp/tmux-0/x,50,0", tmuxPane: "%7" });
  assert.equal(gone.paneId, null);
  assert.match(gone.reason, /no longer exists/);
  // Without TMUX: the parent process being a pane's process proves it; nothing else does.
  const viaParent = findCallerPane(s, { ppid: 200 });
  assert.deepEqual([viaParent.paneId, viaParent.via], ["%2", "parent-process"]);
  assert.equal(findCallerPane(s, { ppid: 999 }).paneId, null);
  assert.equal(findCallerPane(s, {}).via, null);
});

Deno.test("attended: every pane of a person's window, only the active one when zoomed", () => {
  const panes = [
    pane("%1", "@1", 1),
    pane("%2", "@1", 2),
    pane("%3", "@2", 3),
    pane("%4", "@3", 4),
  ];
  const s = snap(panes, [
    client("@1", "%1"),
    client("@2", "%3", { zoomed: true }),
    // A program's control client: no terminal.
    client("@3", "%4", { controlMode: true, tty: "", name: "client-77" }),
  ]);
  const seen = attendedPanes(s);
  assert.deepEqual([...seen.keys()].sort(), ["%1", "%2", "%3"]);
  const zoomed = snap([pane("%5", "@4", 5), pane("%6", "@4", 6)], [
    client("@4", "%6", { zoomed: true }),
  ]);
  assert.deepEqual([...attendedPanes(zoomed).keys()], ["%6"]);
});

Deno.test("attended: a person's choose-tree or choose-client previews any pane, so every pane counts", () => {
  const panes = [pane("%1", "@1", 1), pane("%2", "@2", 2), pane("%3", "@3", 3)];
  // The tree may be open beside the active pane (whose own mode is then none), or zoomed.
  const tree = client("@1", "%1", { previewing: true, paneMode: "", tty: "/dev/pts/4" });
  const seen = attendedPanes(snap(panes, [tree]));
  assert.deepEqual([...seen.keys()].sort(), ["%1", "%2", "%3"]);
  assert.equal(seen.get("%3")?.[0].tty, "/dev/pts/4");
  const zoomed = { ...tree, zoomed: true };
  assert.deepEqual([...attendedPanes(snap(panes, [zoomed])).keys()].sort(), ["%1", "%2", "%3"]);
  // A program's client is no person, previewing or not; copy-mode previews nothing else.
  const program = { ...tree, controlMode: true, tty: "", name: "client-77" };
  assert.deepEqual([...attendedPanes(snap(panes, [program])).keys()], []);
  const copy = client("@1", "%1", { paneMode: "copy-mode", previewing: false });
  assert.deepEqual([...attendedPanes(snap(panes, [copy])).keys()], ["%1"]);
});

Deno.test("attended: a control client on a terminal (tmux -CC, iTerm2) shows its whole session", () => {
  // Session $1: @1 (two panes, zoomed onto %1) and @2; session $2: @3; @4 is linked into both.
  const panes = [
    pane("%1", "@1", 1, ["$1"]),
    pane("%2", "@1", 2, ["$1"]),
    pane("%3", "@2", 3, ["$1"]),
    pane("%4", "@3", 4, ["$2"]),
    pane("%5", "@4", 5, ["$2", "$1"]),
  ];
  const iterm = client("@1", "%1", {
    controlMode: true,
    zoomed: true,
    tty: "/dev/pts/5",
    name: "/dev/pts/5",
    sessionId: "$1",
  });
  assert.equal(isPerson(iterm), true);
  const seen = attendedPanes(snap(panes, [iterm]));
  assert.deepEqual([...seen.keys()].sort(), ["%1", "%2", "%3", "%5"]);
  assert.equal(seen.get("%3")?.[0].tty, "/dev/pts/5");
  // Over pipes (this server's own clients, any program's): no terminal, no person.
  const program = { ...iterm, tty: "", name: "client-4242" };
  assert.equal(isPerson(program), false);
  assert.deepEqual([...attendedPanes(snap(panes, [program])).keys()], []);
  assert.equal(isPerson(client("@1", "%1")), true);
});

Deno.test("isOwnKind: tmux-mcp's control clients over pipes, never a terminal's nor another program's", () => {
  const ours = client("@1", "%1", { controlMode: true, tty: "", termName: OWN_TERM });
  assert.equal(isOwnKind(ours), true);
  assert.equal(isPerson(ours), false);
  // A person whose terminal is named so, plain or on tmux -CC: a person still.
  for (const controlMode of [false, true]) {
    const person = { ...ours, controlMode, tty: "/dev/pts/4" };
    assert.equal(isOwnKind(person), false);
    assert.equal(isPerson(person), true);
  }
  // Another program's control client: someone, though not a person.
  assert.equal(isOwnKind({ ...ours, termName: "xterm" }), false);
  assert.equal(isOwnKind({ ...ours, controlMode: false }), false);
});
