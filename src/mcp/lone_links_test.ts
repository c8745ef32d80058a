import assert from "node:assert/strict";
import { endingFormat, loneLinks, unlinkExtras } from "./lone_links.ts";
import { ToolFailure } from "./errors.ts";
import type { Placement, SessionRow, Snapshot } from "../tmux/snapshot.ts";

const session = (id: string, windows: number, group = ""): SessionRow =>
  ({ id, name: `s${id.slice(1)}`, windows, group }) as SessionRow;

const at = (sessionId: string, index: number, active = false): Placement => ({
  sessionId,
  sessionName: `s${sessionId.slice(1)}`,
  index,
  active,
});

const snapshot = (sessions: SessionRow[]) => ({ sessions }) as Snapshot;

Deno.test("loneLinks finds only sessions holding the window twice or more and nothing else", () => {
  const snap = snapshot([session("$1", 2), session("$2", 3), session("$3", 1)]);
  const found = loneLinks(snap, [
    at("$1", 4, true),
    at("$1", 0),
    // $2 holds another window beside its two links; $3 holds the window once.
    at("$2", 0, true),
    at("$2", 1),
    at("$3", 0, true),
  ]);
  assert.deepEqual(found, [{
    sessionId: "$1",
    sessionName: "s1",
    group: "",
    indexes: [0, 4],
    current: 4,
  }]);
});

Deno.test("unlinkExtras keeps each session's current link, unlinks a group's links once", () => {
  const snap = snapshot([session("$1", 3), session("$2", 2, "g"), session("$3", 2, "g")]);
  const found = loneLinks(snap, [
    at("$1", 0),
    at("$1", 1, true),
    at("$1", 2),
    at("$2", 0, true),
    at("$2", 1),
    at("$3", 0, true),
    at("$3", 1),
  ]);
  assert.deepEqual(unlinkExtras(found, "Killing window @1"), [
    ["unlink-window", "-t", "$1:0"],
    ["unlink-window", "-t", "$1:2"],
    ["unlink-window", "-t", "$2:1"],
  ]);
  // tmux checks each as read: current marked, in index order.
  const format = endingFormat("@1", found);
  assert.ok(format.includes(",0.1*.2.},d,X}"), format);
  assert.ok(format.endsWith(",ddd}"), format);
});

Deno.test("unlinkExtras refuses a group whose sessions show different links", () => {
  const snap = snapshot([session("$2", 2, "g"), session("$3", 2, "g")]);
  const found = loneLinks(snap, [at("$2", 0, true), at("$2", 1), at("$3", 0), at("$3", 1, true)]);
  assert.throws(
    () => unlinkExtras(found, "Killing window @1"),
    (e: unknown) => e instanceof ToolFailure && /show different links of it/.test(e.message),
  );
  assert.deepEqual(unlinkExtras([], "Killing window @1"), []);
});

Deno.test("a refusal names a few of the sessions, each name cut, and counts the rest", () => {
  // Eight sessions of one group, named with 5 000 backslashes each, showing different links.
  const ids = Array.from({ length: 8 }, (_, i) => `$${i + 1}`);
  const named = (id: string) => `${"\\".repeat(5_000)}${id}`;
  const snap = snapshot(ids.map((id) => ({ ...session(id, 2, "g"), name: named(id) })));
  const found = loneLinks(
    snap,
    ids.flatMap((id, i) => [
      { ...at(id, 0, i === 0), sessionName: named(id) },
      { ...at(id, 1, i !== 0), sessionName: named(id) },
    ]),
  );
  assert.equal(found.length, 8);
  assert.throws(
    () => unlinkExtras(found, "Killing window @1"),
    (e: unknown) => {
      const text = e instanceof ToolFailure ? `${e.message} ${e.hint}` : "";
      assert.ok(text.length < 2_000, `${text.length} characters`);
      assert.match(text, /\$1 "\\\\[^"]*…", \$2 /);
      assert.match(text, / and 3 more, which hold nothing else/);
      return true;
    },
  );
});
