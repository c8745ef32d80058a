/**
 * What a client may ask of the resources, however much or however oddly, costs the server
 * little and is answered in one sentence: a listen stream naming a million URIs is granted at
 * most the bound and leaves the server answering at once; a URI of a million characters is
 * refused as invalid params (never an internal error, nor a whole stream lost for it); a URI
 * that names nothing is echoed on one line; a resource has one spelling, and a URI spelled
 * otherwise (`TMUX://`) is refused by read, subscribe and listen alike; completions answer
 * within their budget on a tmux that answers nothing.
 */

import assert from "node:assert/strict";
import { UriTemplate } from "@modelcontextprotocol/server";
import { MAX_WATCHED_URIS } from "../src/mcp/resources.ts";
import { canonicalUri } from "../src/mcp/resource_spec.ts";
import { jobUri } from "../src/tools/job_resource.ts";
import { MODERN_META, type RpcMessage, startCommand, StdioServer } from "./helpers/stdio.ts";
import { cleanEnv, TestTmux, waitFor } from "./helpers/tmux.ts";

type Tmux = Awaited<ReturnType<typeof TestTmux.start>>;

/** A tmux server and MCP server processes on it (`count` of them), started with the start task's flags. */
async function withServers(
  count: number,
  fn: (t: Tmux, servers: StdioServer[]) => Promise<void>,
): Promise<void> {
  const t = await TestTmux.start("main");
  const { cmd, args } = startCommand();
  const servers = Array.from(
    { length: count },
    () => new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv()),
  );
  try {
    await fn(t, servers);
  } finally {
    for (const server of servers) await server.kill();
    await t.kill();
  }
}

/** Writes a `subscriptions/listen` request with id `id` for `uris`. */
async function listen(server: StdioServer, id: string, uris: readonly string[]): Promise<void> {
  await server.writeLine(JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "subscriptions/listen",
    params: { notifications: { resourceSubscriptions: uris }, _meta: MODERN_META },
  }));
}

/** The URIs the listen stream `id` was granted, once acknowledged. */
async function granted(server: StdioServer, id: string, timeoutMs?: number): Promise<string[]> {
  const ack = await waitFor(
    () =>
      server.notifications.find((n) =>
        n.method === "notifications/subscriptions/acknowledged" &&
        (n.params?._meta as Record<string, unknown>)["io.modelcontextprotocol/subscriptionId"] ===
          id
      ),
    `the acknowledgement of ${id}`,
    timeoutMs,
  );
  return (ack.params?.notifications as { resourceSubscriptions: string[] })
    .resourceSubscriptions;
}

/** An error answer's code and message, checked to be one line. */
function refusal(answer: RpcMessage, what: string): { code: number; message: string } {
  assert.ok(answer.error, `${what}: ${JSON.stringify(answer).slice(0, 300)}`);
  assert.ok(!answer.error.message.includes("\n"), `${what}: one line: ${answer.error.message}`);
  return answer.error;
}

Deno.test("a listen stream asking for a million URIs is granted at most the bound, and the server answers at once", async () => {
  await withServers(1, async (_t, [server]) => {
    const uris = Array.from({ length: 1_000_000 }, (_, i) => `tmux://pane/${i}`);
    await listen(server, "many", uris);
    // Each URI was matched, checked and given a context of its own before the bound was
    // tested: 500 000 of them held the server 11 s.
    const started = performance.now();
    const ping = await server.answerWithin(
      server.send("ping", { _meta: MODERN_META }).answer,
      15_000,
    );
    assert.ok(typeof ping !== "string", `the ping: ${ping}`);
    const took = performance.now() - started;
    assert.ok(took < 8_000, `the ping was answered after ${Math.round(took)} ms`);
    const uris2 = await granted(server, "many");
    assert.ok(uris2.length > 0 && uris2.length <= MAX_WATCHED_URIS, `${uris2.length} granted`);
    assert.equal(new Set(uris2).size, uris2.length, "each once");
  });
});

Deno.test("a URI of a million characters is refused as invalid params, and a stream keeps the rest", async () => {
  await withServers(2, async (t, [legacy, modern]) => {
    const long = `tmux://pane/${"1".repeat(1_000_001)}`;
    const good = `tmux://pane/${t.ids.paneId.slice(1)}`;
    await legacy.initialize();
    for (const method of ["resources/read", "resources/subscribe"]) {
      const { code, message } = refusal(await legacy.request(method, { uri: long }), method);
      assert.equal(code, -32602, `${method}: ${message}`);
      assert.ok(message.length < 2_000, `${method}: ${message.length} characters`);
    }
    await listen(modern, "long", [long, good]);
    assert.deepEqual(await granted(modern, "long"), [good]);
    await legacy.endsCleanly();
  });
});

Deno.test("a URI that names nothing is refused on one line; TMUX:// is refused by read, subscribe and listen alike", async () => {
  await withServers(2, async (t, [legacy, modern]) => {
    await legacy.initialize();
    const { code, message } = refusal(
      await legacy.request("resources/subscribe", { uri: "tmux://nope/a\nfake: line\u001b[2J" }),
      "a URI with a newline",
    );
    assert.equal(code, -32602);
    assert.match(message, /^No resource tmux:\/\/nope\/a\\x0Afake: line\\x1B\[2J: /);

    // Each spelling of one resource would be watched, and told, on its own: one is taken, as
    // resources/list gives it.
    const upper = `TMUX://pane/${t.ids.paneId.slice(1)}`;
    for (const method of ["resources/read", "resources/subscribe"]) {
      const answer = await legacy.request(method, { uri: upper });
      assert.equal(refusal(answer, `${method} ${upper}`).code, -32602);
    }
    await listen(modern, "upper", [upper]);
    assert.deepEqual(await granted(modern, "upper"), []);
    await legacy.endsCleanly();
  });
});

Deno.test("completions answer within their budget when tmux answers nothing", async () => {
  await withServers(1, async (t, [server]) => {
    await server.initialize();
    const pid = (await t.facts()).pid;
    Deno.kill(pid, "SIGSTOP");
    try {
      for (
        const ref of [
          // First, while no control connection is open: one opening to a stopped tmux does
          // not heed a signal.
          { type: "ref/prompt", name: "run_and_watch" },
          { type: "ref/resource", uri: "tmux://pane/{pane}" },
        ]
      ) {
        const name = ref.type === "ref/prompt" ? "paneId" : "pane";
        const started = performance.now();
        const answer = await server.answerWithin(
          server.send("completion/complete", { ref, argument: { name, value: "" } }).answer,
          30_000,
        );
        const took = performance.now() - started;
        assert.ok(typeof answer !== "string", `${ref.type}: ${answer}`);
        // Nothing to offer: said as no values, not as an error.
        assert.deepEqual(
          (answer.result?.completion as { values?: unknown } | undefined)?.values,
          [],
          `${ref.type}: ${JSON.stringify(answer)}`,
        );
        // Their budget is 5 s; tmux's own timeout (10 s) is not theirs.
        assert.ok(took < 9_000, `${ref.type}: answered after ${Math.round(took)} ms`);
      }
    } finally {
      Deno.kill(pid, "SIGCONT");
    }
  });
});

Deno.test("a URI with a host is one spelling: socket before host, each encoded as the templates and job URIs are", () => {
  const socket = "a b%+&=x";
  const host = "me@box:22";
  for (const template of ["tmux://server{?host}", "tmux://agents{?socket,host}"]) {
    const uri = new UriTemplate(template).expand({ socket, host });
    assert.equal(canonicalUri(uri), uri);
  }
  const job = jobUri("0-00000000000000000000-1-1-1-1-1", { socketName: socket, host });
  assert.equal(canonicalUri(job), job);
  // Each of these names a resource written otherwise: the host first, `+` for a space, an
  // escape where none is needed, an empty pair.
  for (
    const alias of [
      "tmux://server?host=h&socket=s",
      "tmux://server?socket=a+b&host=h",
      "tmux://server?socket=s&host=%68",
      "tmux://server?socket=s&&host=h",
    ]
  ) {
    assert.notEqual(canonicalUri(alias), alias);
  }
});
