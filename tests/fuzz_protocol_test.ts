/**
 * The fuzz spoken in each protocol version the server speaks (tests/helpers/fuzz_protocol.ts):
 * the tools that wait, run as tasks where the version has them, and requests that are no tool
 * call, on a fixed seed; and the protocol judge's own checks, shown to fail where they should.
 *
 * @module
 */

import assert from "node:assert/strict";
import { TASK_TOOLS } from "../src/mcp/tasks.ts";
import { fuzzHolds } from "./helpers/fuzz_holds.ts";
import { badMoveError, FuzzClient, MOVES, PROTOCOLS } from "./helpers/fuzz_protocol.ts";
import type { RpcMessage, StdioServer } from "./helpers/stdio.ts";

const SEED = 20261208;
const CALLS = 20;
/** The tools that may run as tasks, one that types, and every request that is no tool call. */
const TOOLS = [...TASK_TOOLS, "send_keys", ...MOVES];

for (const protocol of PROTOCOLS) {
  Deno.test(`fuzz, ${protocol}: ${CALLS} calls of the waiting tools and other requests (seed ${SEED}) break no invariant`, async () => {
    const result = await fuzzHolds({ seed: SEED, calls: CALLS, protocol, tools: TOOLS });
    assert.ok(result.moves > 0, "requests that are no tool call were made");
    // A call that asks to run as a task, of a version without tasks, is answered plainly; one
    // of 2025-11-25 is a task whenever it asks. Under 2026-07-28 the server decides: only a
    // call still running after its grace (500 ms) is one, which waits of at most a second
    // seldom are (tests/tasks_test.ts holds that path).
    if (protocol === "2025-06-18") assert.equal(result.tasks, 0);
    if (protocol === "2025-11-25") assert.ok(result.tasks > 0, "calls ran as tasks");
  });
}

Deno.test("fuzz protocol checks: an update of a URI never subscribed to is caught; a refusal must be readable", () => {
  const notifications: RpcMessage[] = [];
  const client = new FuzzClient({ notifications } as unknown as StdioServer, "2025-11-25");
  const updated = (uri: string): RpcMessage => ({
    jsonrpc: "2.0",
    method: "notifications/resources/updated",
    params: { uri },
  });
  assert.equal(client.notificationProblems(), null);
  notifications.push(updated("tmux://pane/3"));
  assert.match(client.notificationProblems() ?? "", /tmux:\/\/pane\/3, never subscribed to/);
  // Each look sees only what came since the last.
  assert.equal(client.notificationProblems(), null);

  assert.equal(badMoveError({ code: -32602, message: "No resource tmux://nope." }, {}), null);
  assert.equal(
    badMoveError({ code: -32603, message: "tmux did not answer: no server on socket x." }, {}),
    null,
    "a failure of tmux, with its reason",
  );
  assert.match(badMoveError({ code: -32603, message: "Internal error" }, {}) ?? "", /internal/);
  assert.match(
    badMoveError({ code: -32602, message: "directory: expected string, received undefined" }, {}) ??
      "",
    /undefined/,
  );
  assert.equal(
    badMoveError({ code: -32602, message: 'No prompt "undefined".' }, { name: "undefined" }),
    null,
    "the word quoted from the request",
  );
  assert.match(badMoveError({ code: -32602, message: "a\u001b[2Jb" }, {}) ?? "", /control/);
});

Deno.test("fuzz protocol checks: a 2026-07-28 stream hears only what it was granted, after its acknowledgement", async () => {
  const notifications: RpcMessage[] = [];
  let nextId = 1;
  const server = {
    notifications,
    send: () => ({ id: nextId++, answer: new Promise<RpcMessage>(() => {}) }),
    notify: () => Promise.resolve(),
  };
  const client = new FuzzClient(server as unknown as StdioServer, "2026-07-28");
  const meta = (id: number) => ({ "io.modelcontextprotocol/subscriptionId": id });
  const message = (method: string, id: number, params: Record<string, unknown>): RpcMessage => ({
    jsonrpc: "2.0",
    method,
    params: { ...params, _meta: meta(id) },
  });
  const listen = (uris: string[]) =>
    client.run({
      tool: "subscriptions/listen",
      arguments: { notifications: { resourceSubscriptions: uris } },
      holdMs: 0,
    });
  const [a, b] = ["tmux://pane/1", "tmux://pane/2"];
  const first = listen([a, "tmux://pane/x"]);
  // Granted only what names a resource: the acknowledgement says which.
  notifications.push(
    message("notifications/subscriptions/acknowledged", first.id, {
      notifications: { resourceSubscriptions: [a] },
    }),
  );
  assert.equal((await first.ended).kind, "cancelled");
  const second = listen([b]);
  notifications.push(message("notifications/resources/updated", first.id, { uri: a }));
  assert.equal(client.notificationProblems(), null);
  notifications.push(message("notifications/resources/updated", second.id, { uri: b }));
  assert.match(client.notificationProblems() ?? "", /before stream 2 was acknowledged/);
  notifications.push(message("notifications/resources/updated", first.id, { uri: b }));
  assert.match(client.notificationProblems() ?? "", /to stream 1, which was not granted it/);
  notifications.push(
    message("notifications/subscriptions/acknowledged", second.id, {
      notifications: { resourceSubscriptions: [b] },
    }),
  );
  assert.equal((await second.ended).kind, "cancelled");
  notifications.push(message("notifications/resources/updated", second.id, { uri: b }));
  assert.equal(client.notificationProblems(), null);
});
