import assert from "node:assert/strict";
import { byteLength, jsonBytes, jsonStringBytes } from "../mcp/bounds.ts";
import { renderReply } from "../mcp/render.ts";
import { type BatchRow, boundBatchRows } from "./send_batch_rows.ts";

function sentRow(index: number, text: string | null, keys: string[] = []): BatchRow {
  return {
    index,
    paneId: "%1",
    status: "sent",
    error: null,
    sent: {
      paneId: "%1",
      text,
      textBytes: text === null ? 0 : byteLength(text),
      textOmittedBytes: 0,
      keys,
      enter: false,
      reachedPanes: ["%1", "%2"],
    },
  };
}

function failedRow(index: number, error: string): BatchRow {
  return { index, paneId: "%9", status: "failed", error, sent: null };
}

/** The rows take at most `budget` bytes both as JSON and as the text renders them. */
function assertWithin(rows: BatchRow[], budget: number): void {
  assert.ok(jsonBytes(rows) <= budget, `JSON: ${jsonBytes(rows)} bytes`);
  const text = renderReply("", { results: rows });
  assert.ok(jsonStringBytes(text) <= budget + 100, `text: ${jsonStringBytes(text)} bytes`);
}

Deno.test("rows that fit are kept whole, their typed text echoed up to 4 KB", () => {
  const rows = [sentRow(0, "echo hi"), sentRow(1, null, ["C-c"]), failedRow(2, "No pane %9.")];
  const bounded = boundBatchRows(rows, 40_000);
  assert.deepEqual(bounded.rows, rows);
  assert.deepEqual([bounded.echoesLeftOut, bounded.textsCut, bounded.errorsCut], [0, 0, 0]);
  const long = boundBatchRows([sentRow(0, "x".repeat(10_000))], 40_000).rows[0].sent!;
  assert.deepEqual([long.text!.length, long.textOmittedBytes], [4_096, 10_000 - 4_096]);
});

Deno.test("quotes and controls are measured as they travel, every row kept and its text shared", () => {
  for (const typed of ['"'.repeat(600), "\x01\x1b\u0085\u2028".repeat(150)]) {
    const rows = Array.from({ length: 64 }, (_, i) => sentRow(i, typed));
    const bounded = boundBatchRows(rows, 40_000);
    assertWithin(bounded.rows, 40_000);
    assert.equal(bounded.rows.length, 64);
    assert.equal(bounded.textsCut, 64);
    for (const row of bounded.rows) {
      const shown = row.sent!.text!;
      assert.ok(shown.length > 0 && typed.startsWith(shown));
      assert.equal(byteLength(shown) + row.sent!.textOmittedBytes, byteLength(typed));
    }
  }
});

Deno.test("a bound too small for every echo keeps every row's status, leading echoes first", () => {
  const keys = Array.from({ length: 64 }, () => "BSpace");
  const rows = Array.from(
    { length: 64 },
    (_, i) =>
      i % 4 === 3 ? failedRow(i, `No pane %9. ${'"'.repeat(3_000)}`) : sentRow(i, "x", keys),
  );
  const bounded = boundBatchRows(rows, 20_000);
  assertWithin(bounded.rows, 20_000);
  assert.deepEqual(
    bounded.rows.map((r) => [r.index, r.status]),
    rows.map((r) => [r.index, r.status]),
  );
  const echoed = bounded.rows.filter((r) => r.status === "sent").map((r) => r.sent !== null);
  const first = echoed.indexOf(false);
  assert.ok(first > 0 && echoed.slice(first).every((e) => !e), `in order: ${echoed}`);
  assert.equal(bounded.echoesLeftOut, echoed.length - first);
  assert.equal(bounded.errorsCut, 16);
  for (const row of bounded.rows.filter((r) => r.status === "failed")) {
    const m = /^([\s\S]*)… \((\d+) bytes cut\)$/.exec(row.error!);
    assert.ok(m, `a cut error says so: ${row.error}`);
    assert.ok(m[1].startsWith("No pane %9."), "it keeps its start");
    assert.equal(byteLength(m[1]) + Number(m[2]), byteLength(rows[row.index].error!));
  }
});
