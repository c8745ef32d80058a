/**
 * send_keys_batch's reply stays within its bound however its rows' echoes and errors grow on
 * the wire: a quote is two bytes in the structured content and four in the text block, a
 * control character six and seven. A batch that typed must never read as failed (a retry would
 * type it all again): every row keeps its index, pane and status, and what was cut is said.
 */

import assert from "node:assert/strict";
import { jsonBytes, MAX_RESULT_BYTES, replyBound } from "../src/mcp/bounds.ts";
import { connect, type TestClient, withTmux } from "./helpers/mcp.ts";
import { parseRendered } from "./helpers/rendered.ts";
import { recorder, removeRecorders } from "./helpers/recorder.ts";
import { waitFor } from "./helpers/tmux.ts";
import type { StartedTmux } from "./helpers/mcp.ts";

type Row = {
  index: number;
  paneId: string;
  status: "sent" | "failed" | "skipped";
  error: string | null;
  sent: {
    text: string | null;
    textBytes: number;
    textOmittedBytes: number;
    keys: string[];
    reachedPanes: string[];
  } | null;
};
type Batch = {
  results: Row[];
  stoppedAt: number | null;
  sent: number;
  failed: number;
  skipped: number;
  note: string | null;
};

const encoder = new TextEncoder();

function wire(result: unknown): number {
  return encoder.encode(JSON.stringify(result)).length;
}

/** A recorder pane (helpers/recorder.ts), read as text. */
async function sink(t: StartedTmux): Promise<{ paneId: string; read: () => Promise<string> }> {
  const { paneId, read } = await recorder(t);
  return { paneId, read: async () => new TextDecoder().decode(await read()) };
}

/**
 * Calls send_keys_batch: the reply must be a success within its bound whose text carries every
 * field (the test client checks the schema and the text), every row reported in order.
 */
async function batch(
  c: TestClient,
  bound: number,
  operations: Record<string, unknown>[],
  onError: "stop" | "continue" = "stop",
): Promise<Batch> {
  const raw = await c.call("send_keys_batch", { operations, onError });
  const text = raw.content?.[0]?.type === "text" ? raw.content[0].text : "";
  assert.notEqual(raw.isError, true, `the batch that typed reads as failed: ${text.slice(0, 300)}`);
  assert.ok(wire(raw) <= replyBound(bound), `the reply is ${wire(raw)} bytes`);
  assert.ok(jsonBytes(raw.structuredContent) <= bound, `${jsonBytes(raw.structuredContent)} bytes`);
  assert.deepEqual(parseRendered(text).data, raw.structuredContent, "the text holds every row");
  const parsed = c.server.registry.get("send_keys_batch")!.outputSchema.safeParse(
    raw.structuredContent,
  );
  assert.ok(parsed.success, String(parsed.error));
  const r = raw.structuredContent as unknown as Batch;
  assert.deepEqual(r.results.map((row) => row.index), operations.map((_, i) => i));
  assert.deepEqual(r.results.map((row) => row.paneId), operations.map((op) => op.paneId));
  return r;
}

/** A sent row's echo is the start of what it typed, and says how many bytes it left out. */
function assertEcho(row: Row, typed: string): void {
  assert.equal(row.status, "sent");
  if (row.sent === null) return;
  assert.equal(row.sent.textBytes, encoder.encode(typed).length);
  const shown = row.sent.text ?? "";
  assert.ok(typed.startsWith(shown), `row ${row.index}'s echo is the start of its text`);
  assert.equal(
    encoder.encode(shown).length + row.sent.textOmittedBytes,
    row.sent.textBytes,
    `row ${row.index}: what is shown and what it says was left out make the whole text`,
  );
}

Deno.test("64 rows of 600 quotes each are all typed, and the reply says so within its bound", async () => {
  await withTmux(async (t, c) => {
    try {
      const s = await sink(t);
      const typed = '"'.repeat(600);
      const operations = Array.from({ length: 64 }, () => ({
        paneId: s.paneId,
        text: typed,
        enter: false,
      }));
      const r = await batch(c, MAX_RESULT_BYTES, operations);
      await waitFor(async () => (await s.read()).length >= 64 * 600, "every quote typed");
      assert.equal(await s.read(), typed.repeat(64), "typed once each, exactly");
      assert.deepEqual([r.sent, r.failed, r.skipped, r.stoppedAt], [64, 0, 0, null]);
      for (const row of r.results) assertEcho(row, typed);
      assert.ok(r.results.every((row) => row.sent !== null), "every row keeps its echo");
      assert.ok(r.results.some((row) => row.sent!.textOmittedBytes > 0), "echoes were cut");
      assert.ok(
        r.results.every((row) => (row.sent!.text ?? "").length > 0),
        "each row shows the start of what it typed",
      );
      assert.match(String(r.note), /shortened/);
    } finally {
      await removeRecorders();
    }
  });
});

Deno.test("64 rows of control characters (\\u00XX on the wire) stay within the bound", async () => {
  await withTmux(async (t, c) => {
    try {
      const s = await sink(t);
      // Six bytes each in the structured content, seven in the text; U+0085 is two bytes raw in
      // the structured content and `\u0085` in the text.
      const typed = "\x01\x02\x1b\x1f\u0085".repeat(120);
      const operations = Array.from({ length: 64 }, () => ({
        paneId: s.paneId,
        text: typed,
        enter: false,
      }));
      const r = await batch(c, MAX_RESULT_BYTES, operations);
      await waitFor(async () => (await s.read()).length >= 64 * 600, "every character typed");
      assert.equal(await s.read(), typed.repeat(64), "typed once each, exactly");
      assert.equal(r.sent, 64);
      for (const row of r.results) assertEcho(row, typed);
      assert.ok(r.results.some((row) => row.sent!.textOmittedBytes > 0), "echoes were cut");
    } finally {
      await removeRecorders();
    }
  });
});

Deno.test("a small bound keeps every row's index, pane and status: sent, failed, skipped", async () => {
  await withTmux(async (t) => {
    const bound = 8_000;
    const small = await connect({ socketName: t.socket, maxResultBytes: bound });
    try {
      const s = await sink(t);
      const typed = '"'.repeat(600);
      const keys = Array.from({ length: 64 }, () => "BSpace");
      // Sent rows with long echoes and many keys, failing rows (no such pane), with onError
      // continue; then with stop, the rows after the failure skipped.
      const operations = Array.from(
        { length: 64 },
        (_, i) =>
          i % 4 === 3
            ? { paneId: "%999999", text: typed }
            : { paneId: s.paneId, text: typed, keys, enter: false },
      );
      const r = await batch(small, bound, operations, "continue");
      assert.deepEqual(
        r.results.map((row) => row.status),
        operations.map((_, i) => i % 4 === 3 ? "failed" : "sent"),
      );
      assert.deepEqual([r.sent, r.failed, r.skipped], [48, 16, 0]);
      for (const row of r.results.filter((x) => x.status === "sent")) assertEcho(row, typed);
      for (const row of r.results.filter((x) => x.status === "failed")) {
        assert.equal(row.sent, null);
        assert.ok(row.error !== null, "a failed row has an error, whole or cut");
      }
      assert.ok(r.note !== null && /left out|cut/.test(r.note), `what was cut is said: ${r.note}`);
      await waitFor(
        async () => (await s.read()).length >= 48 * 600,
        "every sent row's text typed",
      );

      const stopped = await batch(small, bound, operations, "stop");
      assert.deepEqual(
        stopped.results.map((row) => row.status),
        operations.map((_, i) => i < 3 ? "sent" : i === 3 ? "failed" : "skipped"),
      );
      assert.equal(stopped.stoppedAt, 3);
      assert.match(String(stopped.results[3].error), /%999999|pane/);
    } finally {
      await small.close();
      await removeRecorders();
    }
  });
});
