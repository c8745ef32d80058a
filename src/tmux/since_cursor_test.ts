import assert from "node:assert/strict";
import {
  CursorError,
  CURSORS,
  CursorStore,
  MAX_CURSORS,
  MAX_KEPT_ROWS,
  MAX_REMEMBERED_ROWS,
  openCursor,
  rowHash,
  sameCursor,
  type SinceCursor,
} from "./since_cursor.ts";

const CURSOR: SinceCursor = {
  serverPid: 123,
  serverStart: 1_796_000_000,
  paneId: "%7",
  panePid: 456,
  width: 80,
  historyLimit: 2000,
  historySize: 30,
  base: 22,
  cursorRow: 40,
  rows: rowHash("a") + rowHash("b"),
  altHash: null,
};

/** A cursor remembering `n` rows. */
function tall(n: number): SinceCursor {
  return { ...CURSOR, rows: rowHash("y").repeat(n) };
}

const NOT_SEALED = /not sealed by this server process/;

Deno.test("a cursor travels as a short id, whatever it remembers, and opens as often as asked", async () => {
  const store = new CursorStore();
  const short = await store.issue(CURSOR);
  const most = await store.issue(tall(MAX_REMEMBERED_ROWS));
  assert.match(short, /^tmc3\.[0-9a-z]+\.[A-Za-z0-9_-]{16}$/);
  assert.equal(short.length, most.length);
  assert.ok(short.length <= 30, short);
  // Passed back more than once (a retry, or wait_for_text's since after capture_since): an
  // earlier point, the same each time.
  assert.deepEqual(await store.open(short), CURSOR);
  assert.deepEqual(await store.open(short), CURSOR);
  assert.equal((await store.open(most)).rows.length, MAX_REMEMBERED_ROWS * 8);
  // No cursor remembers more than the anchor and the tallest pane tmux allows.
  await assert.rejects(() => store.issue(tall(MAX_REMEMBERED_ROWS + 1)));
  assert.ok(sameCursor(CURSOR, { ...CURSOR }));
  assert.ok(!sameCursor(CURSOR, { ...CURSOR, altHash: rowHash("x") }));
});

Deno.test("an id not sealed by this store is refused before it is looked up; a malformed one as such", async () => {
  const store = new CursorStore();
  const id = await store.issue(CURSOR);
  const [prefix, serial, seal] = id.split(".");
  // Another process (or this server before a restart) seals with another key.
  const foreign = await new CursorStore().issue(CURSOR);
  assert.equal(foreign.split(".")[1], serial, "the same serial number, elsewhere");
  const flipped = seal.replace(/^./, (c) => c === "A" ? "B" : "A");
  for (
    const bad of [
      foreign,
      `${prefix}.${serial}.${flipped}`,
      // A serial number not handed out yet, or an earlier one, with this one's seal.
      `${prefix}.${(parseInt(serial, 36) + 1).toString(36)}.${seal}`,
      `${prefix}.0${serial}.${seal}`,
      `${prefix}.${serial}.${"A".repeat(16)}`,
    ]
  ) {
    await assert.rejects(
      () => store.open(bad),
      (e) => e instanceof CursorError && NOT_SEALED.test(e.message),
      bad,
    );
  }
  for (
    const bad of [
      "",
      "garbage",
      `${prefix}.${serial}`,
      `${id}x`,
      `${id}.${seal}`,
      `tmc2.${serial}.${seal}`,
      `${prefix}.${serial.toUpperCase()}Z.${seal}`,
      // A cursor of the form before: the whole cursor, 8 characters a row.
      `tmc2.${btoa(JSON.stringify([1, 2, "%2", 3, 80, 2000, 0, 0, 1, "", null]))}.${rowHash("x")}`,
    ]
  ) {
    await assert.rejects(
      () => store.open(bad),
      (e) => e instanceof CursorError && /malformed/.test(e.message),
      bad,
    );
  }
});

Deno.test("the least recently used cursor is dropped past the bound, and is then refused as expired", async () => {
  const store = new CursorStore(3);
  const a = await store.issue({ ...CURSOR, base: 1 });
  const b = await store.issue({ ...CURSOR, base: 2 });
  const c = await store.issue({ ...CURSOR, base: 3 });
  await store.open(a); // used: b is now the least recently used
  const d = await store.issue({ ...CURSOR, base: 4 });
  assert.equal(store.size, 3);
  await assert.rejects(
    () => store.open(b),
    (e) =>
      e instanceof CursorError &&
      /expired: this server process keeps the 3 cursors handed out or passed back last/.test(
        e.message,
      ),
  );
  for (const [id, base] of [[a, 1], [c, 3], [d, 4]] as const) {
    assert.equal((await store.open(id)).base, base);
  }
});

Deno.test("cursors are bounded by the rows they remember too, the newest always kept", async () => {
  const store = new CursorStore(100, 20);
  const first = await store.issue(tall(8));
  const second = await store.issue(tall(8));
  const third = await store.issue(tall(8));
  await assert.rejects(() => store.open(first), /expired/);
  assert.deepEqual([(await store.open(second)).rows, (await store.open(third)).rows], [
    tall(8).rows,
    tall(8).rows,
  ]);
  const huge = await store.issue(tall(30));
  assert.equal(store.size, 1);
  assert.equal((await store.open(huge)).rows, tall(30).rows);
});

Deno.test("a flood of cursors keeps memory bounded: at most MAX_CURSORS, MAX_KEPT_ROWS rows", async () => {
  const store = new CursorStore();
  const ids: string[] = [];
  for (let i = 0; i < MAX_CURSORS + 50; i++) ids.push(await store.issue({ ...CURSOR, base: i }));
  assert.equal(store.size, MAX_CURSORS);
  await assert.rejects(() => store.open(ids[49]), /expired/);
  assert.equal((await store.open(ids[50])).base, 50);
  // Cursors of the tallest panes: the rows bound comes first.
  for (let i = 0; i < 60; i++) await store.issue(tall(MAX_REMEMBERED_ROWS));
  assert.equal(store.size, Math.floor(MAX_KEPT_ROWS / MAX_REMEMBERED_ROWS));
});

Deno.test("openCursor refuses a cursor taken on another pane", async () => {
  const id = await CURSORS.issue(CURSOR);
  assert.deepEqual(await openCursor(id, "%7"), CURSOR);
  await assert.rejects(() => openCursor(id, "%8"), /The cursor was taken on pane %7, not %8/);
});
