/**
 * A `subscriptions/listen` request's id is held like any request's (src/mcp/stdio.ts): while a
 * call with that id runs, or while a listen stream with it is open, a request of either kind
 * that takes it is refused (-32600, "already in use") and never handed on. Before, a listen
 * could take a running call's id (a cancel of it then ended the listen, and the call ran on), a
 * call could take an open stream's id (its answer ended the stream), a second listen could
 * take it (and replace the first one's filter), and under 2025-11-25 the "method not found"
 * answer to such a listen freed the id of the call still running.
 *
 * The real server process over stdio with the start task's flags, on a private tmux server.
 * Nothing waits a fixed time: each test waits for what the server says or tmux shows.
 */

import assert from "node:assert/strict";
import { MODERN_META, type RpcMessage, type StdioServer, withBashServer } from "./helpers/stdio.ts";
import { type TestTmux, waitFor } from "./helpers/tmux.ts";

type Tmux = Awaited<ReturnType<typeof TestTmux.start>>;

const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";

function uriOf(paneId: string): string {
  return `tmux://pane/${paneId.slice(1)}`;
}

/** Types a command line into a shell pane. */
async function type(t: Tmux, paneId: string, line: string): Promise<void> {
  await t.tmux("send-keys", "-t", paneId, "-l", line);
  await t.tmux("send-keys", "-t", paneId, "Enter");
}

/** A raw request line with the id `id` (a 2026-07-28 one unless `meta` is null). */
function line(
  id: string | number,
  method: string,
  params: Record<string, unknown>,
  meta: Record<string, unknown> | null = MODERN_META,
): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id,
    method,
    params: meta === null ? params : { ...params, _meta: meta },
  });
}

function listenLine(id: string | number, uri: string): string {
  return line(id, "subscriptions/listen", { notifications: { resourceSubscriptions: [uri] } });
}

/** What came with the id `id` that was not asked for through the helper: raw answers. */
function answersTo(s: StdioServer, id: string | number): RpcMessage[] {
  return s.notifications.filter((n) => n.method === undefined && n.id === id);
}

function isInUse(m: RpcMessage): boolean {
  return m.error?.code === -32600 && /already in use/.test(m.error.message);
}

function acknowledged(s: StdioServer, id: string | number): boolean {
  return s.notifications.some((n) =>
    n.method === "notifications/subscriptions/acknowledged" &&
    (n.params?._meta as Record<string, unknown> | undefined)?.[SUBSCRIPTION_ID] === id
  );
}

/** Types into `paneId` until an update for stream `id` comes after the `from`th message. */
async function updateAfter(
  t: Tmux,
  s: StdioServer,
  id: string | number,
  paneId: string,
  from: number,
): Promise<void> {
  let n = 0;
  await waitFor(async () => {
    const heard = s.notifications.slice(from).some((m) =>
      m.method === "notifications/resources/updated" && m.params?.uri === uriOf(paneId) &&
      (m.params?._meta as Record<string, unknown> | undefined)?.[SUBSCRIPTION_ID] === id
    );
    if (heard) return true;
    await type(t, paneId, `echo change-${n++}`);
    return false;
  }, `an update of ${paneId} for listen stream ${id}`);
}

Deno.test("a listen that takes a running call's id is refused, and a cancel of the id stops the call", async () => {
  await withBashServer(async (t, s) => {
    const modern = (params: Record<string, unknown>) => ({ ...params, _meta: MODERN_META });
    const warm = await s.request("tools/call", modern({ name: "list_panes", arguments: {} }));
    assert.equal(warm.error, undefined, JSON.stringify(warm.error));
    const marker = "TYPED-AFTER-CANCEL";
    // One write: the call, a listen with its id, the cancel of that id.
    await s.writeLine([
      line(9, "tools/call", {
        name: "run_command",
        arguments: { paneId: t.ids.paneId, command: `echo ${marker}` },
      }),
      listenLine(9, uriOf(t.ids.paneId)),
      JSON.stringify({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: 9, reason: "stop", _meta: MODERN_META },
      }),
    ].join("\n"));
    await waitFor(() => answersTo(s, 9).length > 0, "an answer with id 9");
    assert.ok(isInUse(answersTo(s, 9)[0]), JSON.stringify(answersTo(s, 9)));
    // A later run_command in the same pane, after the cancel was read: once it has run, a call 9
    // not cancelled would have run before it (a pane takes one run_command at a time: it is
    // refused as busy meanwhile, and asked again).
    const later = "LATER-CALL-RAN";
    await waitFor(async () => {
      const answer = await s.request(
        "tools/call",
        modern({
          name: "run_command",
          arguments: { paneId: t.ids.paneId, command: `echo ${later}` },
        }),
      );
      assert.equal(answer.error, undefined, JSON.stringify(answer.error));
      return answer.result?.isError !== true;
    }, "the later run_command to run");
    const screen = await t.tmux("capture-pane", "-p", "-t", t.ids.paneId);
    assert.ok(screen.includes(later), screen);
    assert.ok(!screen.includes(marker), `the cancelled call typed its command:\n${screen}`);
    assert.equal(answersTo(s, 9).length, 1, JSON.stringify(answersTo(s, 9)));
    assert.ok(!acknowledged(s, 9), "the refused listen was never served");
  });
});

Deno.test("a call that takes an open listen stream's id is refused, and the stream goes on", async () => {
  await withBashServer(async (t, s) => {
    await s.writeLine(listenLine(7, uriOf(t.ids.paneId)));
    await waitFor(() => acknowledged(s, 7), "the acknowledgement");
    await s.writeLine(line(7, "tools/call", { name: "list_sessions", arguments: {} }));
    await waitFor(() => answersTo(s, 7).length > 0, "an answer with id 7");
    assert.ok(isInUse(answersTo(s, 7)[0]), JSON.stringify(answersTo(s, 7)));
    await updateAfter(t, s, 7, t.ids.paneId, s.notifications.length);
    assert.equal(answersTo(s, 7).length, 1, JSON.stringify(answersTo(s, 7)));
  });
});

Deno.test("a second listen with an open stream's id is refused, and the first keeps its filter", async () => {
  await withBashServer(async (t, s) => {
    const other = (await t.tmux(
      "split-window",
      "-d",
      "-P",
      "-F",
      "#{pane_id}",
      "-t",
      t.ids.paneId,
      "bash --norc --noprofile",
    )).trim();
    await t.prompt(other);
    await s.writeLine(listenLine(7, uriOf(t.ids.paneId)));
    await waitFor(() => acknowledged(s, 7), "the acknowledgement");
    await s.writeLine(listenLine(7, uriOf(other)));
    await waitFor(() => answersTo(s, 7).length > 0, "an answer with id 7");
    assert.ok(isInUse(answersTo(s, 7)[0]), JSON.stringify(answersTo(s, 7)));
    assert.equal(
      s.notifications.filter((n) => n.method === "notifications/subscriptions/acknowledged")
        .length,
      1,
      "the second listen was never served",
    );
    await updateAfter(t, s, 7, t.ids.paneId, s.notifications.length);
    // Once the stream is cancelled its id is free again: a listen may take it.
    await s.writeLine(JSON.stringify({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 7, _meta: MODERN_META },
    }));
    await s.writeLine(listenLine(7, uriOf(other)));
    await waitFor(
      () =>
        s.notifications.filter((n) => n.method === "notifications/subscriptions/acknowledged")
          .length === 2,
      "the acknowledgement of the listen after the cancel",
    );
    await updateAfter(t, s, 7, other, s.notifications.length);
    assert.equal(answersTo(s, 7).length, 1, JSON.stringify(answersTo(s, 7)));
  });
});

Deno.test("under 2025-11-25 a listen with a running wait's id is refused, and the id stays held", async () => {
  await withBashServer(async (t, s) => {
    const init = await s.request("initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "tmux-mcp-tests", version: "1" },
    });
    assert.equal(init.error, undefined, JSON.stringify(init.error));
    await s.notify("notifications/initialized");
    const wait = (pattern: string) =>
      line(9, "tools/call", {
        name: "wait_for_text",
        arguments: { paneId: t.ids.paneId, patterns: [pattern], timeoutMs: 60_000 },
      }, null);
    await s.writeLine(wait("FOUND-FIRST"));
    await s.writeLine(line(9, "subscriptions/listen", {}, null));
    await waitFor(() => answersTo(s, 9).length > 0, "an answer to the listen");
    assert.ok(isInUse(answersTo(s, 9)[0]), JSON.stringify(answersTo(s, 9)));
    // The wait still holds id 9: another request with it is refused too.
    await s.writeLine(wait("FOUND-SECOND"));
    await waitFor(() => answersTo(s, 9).length > 1, "an answer to the second wait");
    assert.ok(isInUse(answersTo(s, 9)[1]), JSON.stringify(answersTo(s, 9)));
    // Typed until the wait answers: it sees only output that comes after it began watching.
    await waitFor(async () => {
      if (answersTo(s, 9).length > 2) return true;
      await type(t, t.ids.paneId, "echo FOUND-FIRST FOUND-SECOND");
      return false;
    }, "the wait's answer");
    // A round trip after it: nothing else with id 9 was on its way.
    const ping = await s.request("ping");
    assert.equal(ping.error, undefined, JSON.stringify(ping.error));
    const answers = answersTo(s, 9);
    assert.equal(answers.length, 3, JSON.stringify(answers));
    const last = answers[2];
    assert.equal(last.error, undefined, JSON.stringify(last));
    const text = JSON.stringify(last.result);
    assert.match(text, /FOUND-FIRST/);
    assert.equal(last.result?.isError, undefined, text);
  });
});
