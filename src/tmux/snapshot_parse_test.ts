import assert from "node:assert/strict";
import { newGuard } from "./format.ts";
import { parseSnapshot } from "./snapshot_parse.ts";

Deno.test("snapshot: packed id/number fields are checked, never guessed", () => {
  const guard = newGuard();
  const record = (kind: string, fields: string[]) =>
    `${guard}R${[kind, ...fields].map((f) => `${guard}F${f}`).join("")}${guard}E\n`;
  const bytes = (s: string) => new TextEncoder().encode(s);
  // A server record: socket path, version and the sessions' last attaches framed on their own,
  // the pid and start packed.
  const good = record("V", ["/tmp/sock", "3.3a", "1796000005 1796000010 ", "123 1796000000"]);
  const server = parseSnapshot(bytes(good), guard).server;
  assert.deepEqual(
    [server?.pid, server?.startTime, server?.lastAttached],
    [123, 1796000000, 1796000010],
  );
  for (const packed of ["123", "12 3 4", "abc 1", "1;2 3", "#{pid} #{start_time}"]) {
    assert.throws(
      () => parseSnapshot(bytes(record("V", ["/tmp/sock", "3.3a", "", packed])), guard),
      /unexpected packed tmux values/,
      packed,
    );
  }
  // A pane's own row takes its places from its window's rows; a window tmux did not list
  // cannot be guessed.
  const place = record("N", ["editor", "work", "@4 $2 3 1 1"]);
  const pane = record("b", ["vim", "/tmp", "title", "%7 @4 0 1 0 80 24 99"]);
  const [read] = parseSnapshot(bytes(place + pane), guard).panes;
  assert.deepEqual(
    [read.windowName, read.placements],
    ["editor", [{ sessionId: "$2", sessionName: "work", index: 3, active: true }]],
  );
  // A window also in another session (one session's read): the read is made again with all.
  assert.equal(parseSnapshot(bytes(place + pane), guard).placedElsewhere, false);
  const shared = record("N", ["editor", "work", "@4 $2 3 1 2"]);
  assert.equal(parseSnapshot(bytes(shared + pane), guard).placedElsewhere, true);
  assert.throws(
    () =>
      parseSnapshot(bytes(place + record("b", ["vim", "/", "", "%7 @5 0 1 0 80 24 99"])), guard),
    /pane %7 of an unlisted window/,
  );
});
