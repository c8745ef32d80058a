import assert from "node:assert/strict";
import {
  holdsOpen,
  parseSeats,
  parseStandings,
  type Seat,
  type SessionStanding,
  sessionToJoin,
  sessionToLift,
  sessionToRestore,
  type Touch,
  touched,
} from "./recency.ts";

function standing(
  id: string,
  activity: number,
  clients = 0,
  destroyUnattached = false,
  exitUnattached = false,
): SessionStanding {
  return { id, activity, clients, destroyUnattached, exitUnattached };
}

Deno.test("parseStandings reads tmux's lines and skips what does not fit", () => {
  assert.deepEqual(
    parseStandings("$0 100 1 off\n$3 90 0 on\n\nbogus line\n$4 x 0 off\n$5 80 0 1\n"),
    [standing("$0", 100, 1), standing("$3", 90, 0, true), standing("$5", 80, 0, true)],
  );
  assert.deepEqual(parseStandings("$0 100 2 0 1\n"), [standing("$0", 100, 2, false, true)]);
});

Deno.test("holdsOpen: with exit-unattached, only clients other than tmux-mcp's keep the server", () => {
  const on = [standing("$0", 1, 1, false, true), standing("$1", 1, 0, false, true)];
  const seat = (sessionId: string, ownKind: boolean) =>
    ({ sessionId, name: `client-${sessionId.slice(1)}`, ownKind }) satisfies Seat;
  assert.equal(holdsOpen(on, [seat("$0", true)]), true, "tmux-mcp's alone (ours or another's)");
  assert.equal(holdsOpen(on, [seat("$0", true), seat("$1", true)]), true, "two processes'");
  assert.equal(holdsOpen(on, [seat("$0", true), seat("$1", false)]), false, "someone else");
  assert.equal(holdsOpen(on, []), true, "nobody: ours would be the one");
  assert.equal(holdsOpen([standing("$0", 1, 1)], [seat("$0", true)]), false, "option off");
});

Deno.test("parseSeats reads list-clients lines in SEAT_FORMAT and skips list-sessions ones", () => {
  const text = "$0 100 1 0 1\n$0\t1\tclient-12\n$1\t0\t/dev/pts/3\n$2\tx\tbad\n\n";
  assert.deepEqual(parseSeats(text), [
    { sessionId: "$0", name: "client-12", ownKind: true },
    { sessionId: "$1", name: "/dev/pts/3", ownKind: false },
  ]);
  assert.deepEqual(parseStandings(text), [standing("$0", 100, 1, false, true)]);
});

Deno.test("sessionToJoin: the least recently used, preferring sessions nobody is attached to", () => {
  const sessions = [standing("$0", 300, 1), standing("$1", 100, 1), standing("$2", 200)];
  assert.equal(sessionToJoin(sessions), "$2");
  assert.equal(sessionToJoin([...sessions, standing("$3", 150)]), "$3");
  // Everyone's sessions are attached: the least recently used of them.
  assert.equal(sessionToJoin(sessions.slice(0, 2)), "$1");
  // Limited to the sessions a pane is in; never one that ends when its last client leaves.
  assert.equal(sessionToJoin(sessions, ["$0", "$1"]), "$1");
  assert.equal(sessionToJoin([standing("$0", 1, 0, true), standing("$1", 5, 1)]), "$1");
  assert.equal(sessionToJoin([standing("$0", 1, 1, true)]), undefined);
  assert.equal(sessionToJoin([], undefined), undefined);
  // Ties: the older session.
  assert.equal(sessionToJoin([standing("$9", 7), standing("$4", 7)]), "$4");
});

Deno.test("touched keeps a session's own last use across our attaches", () => {
  const first = touched(undefined, 100, 150);
  assert.deepEqual(first, { before: 100, bumped: 150 });
  // We attach again: the use we saw was our own.
  assert.deepEqual(touched(first, 150, 170), { before: 100, bumped: 170 });
  // Someone used it after our attach: that use is its own.
  assert.deepEqual(touched(first, 160, 170), { before: 160, bumped: 170 });
});

Deno.test("sessionToRestore names the session a plain attach would have picked without us", () => {
  const touches = new Map<string, Touch>([["$0", { before: 10, bumped: 50 }]]);
  const none = new Map<string, number>();
  // We joined $0 (last used at 10) at 50; $1 was used at 40: move to $1 before leaving.
  assert.equal(sessionToRestore([standing("$0", 50, 1), standing("$1", 40)], none, touches), "$1");
  // The person used $0 after us: it is theirs, nothing to do.
  assert.equal(sessionToRestore([standing("$0", 60, 1), standing("$1", 40)], none, touches), null);
  // $1 already leads.
  assert.equal(sessionToRestore([standing("$0", 50, 1), standing("$1", 55)], none, touches), null);
  // A tie in seconds: move anyway (tmux compares microseconds).
  assert.equal(sessionToRestore([standing("$0", 50, 1), standing("$1", 50)], none, touches), "$1");
  // $0 was the most recent before we came: it stays on top.
  const recent = new Map<string, Touch>([["$0", { before: 45, bumped: 50 }]]);
  assert.equal(sessionToRestore([standing("$0", 50, 1), standing("$1", 40)], none, recent), null);
  // Sessions other clients hold are not a plain attach's pick: only the unattached count.
  const held = new Map([["$1", 1]]);
  assert.equal(
    sessionToRestore([standing("$0", 50, 1), standing("$1", 40, 1)], held, touches),
    null,
  );
  assert.equal(
    sessionToRestore(
      [standing("$0", 50, 1), standing("$1", 40, 1), standing("$2", 30)],
      held,
      touches,
    ),
    "$2",
  );
  // The rightful pick ends when its last client leaves: we never join it, so nothing to do.
  assert.equal(
    sessionToRestore([standing("$0", 50, 1), standing("$1", 40, 0, true)], none, touches),
    null,
  );
  // Ties of a session's own last use: one we never touched, then the newer.
  const both = new Map<string, Touch>([
    ["$0", { before: 40, bumped: 50 }],
    ["$2", { before: 40, bumped: 50 }],
  ]);
  assert.equal(
    sessionToRestore([standing("$0", 50, 1), standing("$1", 40), standing("$2", 50)], none, both),
    "$1",
  );
  assert.equal(
    sessionToRestore([standing("$3", 40), standing("$1", 40), standing("$0", 50, 1)], none, both),
    "$3",
  );
});

Deno.test("sessionToLift names the session most recently used before our attach, attached or not", () => {
  const touches = new Map<string, Touch>([["$0", { before: 10, bumped: 50 }]]);
  const nobody = new Set<string>();
  // We joined $0 (last used at 10) at 50; $1 was used at 40: lift $1 at once.
  assert.equal(sessionToLift([standing("$0", 50, 1), standing("$1", 40)], touches, nobody), "$1");
  // A session only our clients sit in counts too: it is a plain attach's pick once they go.
  assert.equal(
    sessionToLift(
      [standing("$0", 50, 1), standing("$1", 40, 1), standing("$2", 30)],
      touches,
      nobody,
    ),
    "$1",
  );
  // Someone not tmux-mcp is attached to it: never a client of ours there, not even for a moment.
  assert.equal(
    sessionToLift([standing("$0", 50, 1), standing("$1", 40, 1)], touches, new Set(["$1"])),
    null,
  );
  // $0 was the most recent before we came, or $1 leads already, or there is no other session.
  const recent = new Map<string, Touch>([["$0", { before: 45, bumped: 50 }]]);
  assert.equal(sessionToLift([standing("$0", 50, 1), standing("$1", 40)], recent, nobody), null);
  assert.equal(sessionToLift([standing("$0", 50, 1), standing("$1", 55)], touches, nobody), null);
  assert.equal(sessionToLift([standing("$0", 50, 1)], touches, nobody), null);
  // A tie in seconds: lift anyway (tmux compares microseconds).
  assert.equal(sessionToLift([standing("$0", 50, 1), standing("$1", 50)], touches, nobody), "$1");
  // It ends when its last client leaves: a client of ours coming and going would end it.
  assert.equal(
    sessionToLift([standing("$0", 50, 1), standing("$1", 40, 0, true)], touches, nobody),
    null,
  );
});
