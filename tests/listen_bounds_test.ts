/**
 * What 2026-07-28 `subscriptions/listen` streams may hold, however they are asked: a stream
 * holds only the URIs it was granted (a listen naming millions of strings held them all, a few
 * dozen such streams ended the process out of memory, and a stream told it was granted nothing
 * was still sent updates of a URI another stream was granted later); a resource is named by
 * one spelling only (`tmux://pane/00`, `TMUX://pane/0`, `tmux://pane/a/../0`, `?&&`,
 * `?socket=%6D…` were each granted as a URI of its own, each stream the same 512 again), and
 * every URI resources/list and the templates give is that spelling (a socket name a URI must
 * escape too); the pairs of streams and URIs of one connection are bounded; a numeric id JSON
 * cannot carry exactly is refused, not answered as another request's.
 *
 * The real server process over stdio with the start task's flags, on a private tmux server.
 * Nothing waits a fixed time: each test waits for what the server says or tmux shows.
 */

import assert from "node:assert/strict";
import { UriTemplate } from "@modelcontextprotocol/server";
import { MAX_LISTEN_PAIRS, MAX_WATCHED_URIS } from "../src/mcp/resources.ts";
import {
  MODERN_META,
  type RpcMessage,
  startCommand,
  StdioServer,
  withBashServer,
} from "./helpers/stdio.ts";
import { cleanEnv, testSocketName, TestTmux, waitFor } from "./helpers/tmux.ts";

type Tmux = Awaited<ReturnType<typeof TestTmux.start>>;

const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";

function uriOf(paneId: string): string {
  return `tmux://pane/${paneId.slice(1)}`;
}

/** A `subscriptions/listen` request line with id `id` for `uris`. */
function listenLine(id: string, uris: readonly string[]): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "subscriptions/listen",
    params: { notifications: { resourceSubscriptions: uris }, _meta: MODERN_META },
  });
}

function streamOf(m: RpcMessage): unknown {
  return (m.params?._meta as Record<string, unknown> | undefined)?.[SUBSCRIPTION_ID];
}

/** The URIs the listen stream `id` was granted, once acknowledged. */
async function granted(s: StdioServer, id: string): Promise<string[]> {
  const ack = await waitFor(
    () =>
      s.notifications.find((n) =>
        n.method === "notifications/subscriptions/acknowledged" && streamOf(n) === id
      ),
    `the acknowledgement of ${id}`,
  );
  const notifications = ack.params?.notifications as { resourceSubscriptions?: string[] };
  return notifications.resourceSubscriptions ?? [];
}

/** The process's peak resident memory so far, in KiB (VmHWM). */
async function peakKib(s: StdioServer): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${s.child.pid}/status`);
  const kib = /^VmHWM:\s+(\d+) kB$/m.exec(status);
  assert.ok(kib, status);
  return Number(kib[1]);
}

/** A second server process on `t`'s tmux, for a client of the 2025-11-25 protocol. */
function legacyServer(t: Tmux): StdioServer {
  const { cmd, args } = startCommand();
  return new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv());
}

Deno.test("listens naming half a million strings each hold only what they were granted", async () => {
  await withBashServer(async (t, s) => {
    const listed = await s.request("tools/list", { _meta: MODERN_META });
    assert.equal(listed.error, undefined, JSON.stringify(listed.error));
    const before = await peakKib(s);
    const good = uriOf(t.ids.paneId);
    // Half a million names of nothing each, in a line of some 4 MB.
    const names = [good, ...Array.from({ length: 500_000 }, (_, i) => String(i))];
    const streams = 16;
    for (let i = 0; i < streams; i++) {
      await s.writeLine(listenLine(`big-${i}`, names));
      assert.deepEqual(await granted(s, `big-${i}`), [good]);
    }
    const grown = (await peakKib(s)) - before;
    // Each stream held its half a million names (some 20 MB each) until the connection ended.
    assert.ok(grown < 200 * 1024, `the peak grew by ${Math.round(grown / 1024)} MB`);
  });
});

Deno.test("a stream not granted a URI is not told of it when another stream is granted it", async () => {
  await withBashServer(async (t, s) => {
    const good = uriOf(t.ids.paneId);
    // Past the URIs a stream may name, the rest is left out of its grant.
    const names = Array.from({ length: MAX_WATCHED_URIS }, (_, i) => `no-such-${i}`);
    await s.writeLine(listenLine("late", [...names, good]));
    assert.deepEqual(await granted(s, "late"), []);
    await s.writeLine(listenLine("granted", [good]));
    assert.deepEqual(await granted(s, "granted"), [good]);
    let n = 0;
    await waitFor(async () => {
      const heard = s.notifications.some((m) =>
        m.method === "notifications/resources/updated" && streamOf(m) === "granted"
      );
      if (heard) return true;
      await t.tmux("send-keys", "-t", t.ids.paneId, `echo change-${n++}`, "Enter");
      return false;
    }, "an update for the granted stream");
    // Routed to every stream in the order they were opened: one for "late" came first.
    const leaked = s.notifications.filter((m) =>
      m.method === "notifications/resources/updated" && streamOf(m) === "late"
    );
    assert.deepEqual(leaked, []);
  });
});

Deno.test("a resource has one spelling: aliases are refused by listen, read and subscribe alike", async () => {
  await withBashServer(async (t, s) => {
    const pane = t.ids.paneId.slice(1);
    const good = `tmux://pane/${pane}`;
    const aliases = [
      `tmux://pane/0${pane}`,
      `tmux://pane/000000000${pane}`,
      `TMUX://pane/${pane}`,
      `${good}?`,
      `${good}#`,
      `tmux://pane/./${pane}`,
      `tmux://pane/a1/../${pane}`,
      // URL's href keeps empty pairs and percent-escapes, and the query parser drops the one
      // and decodes the other: each named pane %N (or the server "other") again.
      `${good}?&`,
      `${good}?&&`,
      `${good}?&&&`,
      `tmux://server?socket=oth%65r`,
      `tmux://server?%73ocket=other`,
      `tmux://server?&socket=other`,
      `tmux://server?socket=other&`,
      `tmux://server?socket=a+b`,
      `${good}?socket=${t.socket}&`,
      `${good}?socket=%74${t.socket.slice(1)}`,
    ];
    // This server's own socket by name is a resource of its own (as a template fills it), the
    // one spelling of it: the two above are others.
    const bySocket = `${good}?socket=${t.socket}`;
    await s.writeLine(listenLine("aliases", [...aliases, good, bySocket]));
    assert.deepEqual(await granted(s, "aliases"), [good, bySocket]);
    const legacy = legacyServer(t);
    try {
      await legacy.initialize();
      for (const uri of aliases) {
        for (const method of ["resources/read", "resources/subscribe"]) {
          const answer = await legacy.request(method, { uri });
          assert.equal(answer.error?.code, -32602, `${method} ${uri}: ${JSON.stringify(answer)}`);
        }
      }
      for (const uri of [good, bySocket]) {
        const read = await legacy.request("resources/read", { uri });
        assert.equal(read.error, undefined, JSON.stringify(read.error));
      }
      await legacy.endsCleanly();
    } finally {
      await legacy.kill();
    }
  });
});

/** A private tmux server on a socket whose name a URI must encode (a space, `%`, `+`, `&`, `=`). */
class OddTmux extends TestTmux {
  override readonly socket = `${testSocketName()} 50%+&=x`;
}

/**
 * The URIs `s` lists once it has run a job on `odd`'s pane `paneId` (by socket name): the
 * panes, the server and agents, and the job, whose URI carries the odd socket name encoded.
 */
async function listedWithOddJob(
  s: StdioServer,
  odd: OddTmux,
  paneId: string,
  meta: Record<string, unknown>,
): Promise<string[]> {
  const ran = await s.request("tools/call", {
    name: "run_command",
    arguments: { paneId, command: "true", socket_name: odd.socket },
    ...meta,
  });
  assert.equal(ran.error, undefined, JSON.stringify(ran.error));
  assert.notEqual(ran.result?.isError, true, JSON.stringify(ran.result));
  const listed = await s.request("resources/list", meta);
  assert.equal(listed.error, undefined, JSON.stringify(listed.error));
  const uris = (listed.result?.resources as { uri: string }[]).map((r) => r.uri);
  const encoded = `?socket=${encodeURIComponent(odd.socket)}`;
  assert.ok(uris.some((u) => u.startsWith("tmux://job/") && u.endsWith(encoded)), uris.join(" "));
  assert.ok(uris.some((u) => u.startsWith("tmux://pane/")), uris.join(" "));
  // And what the templates give for the odd server, filled as the SDK fills them (a pane's
  // ?socket= is added as its description says).
  const filled = [
    new UriTemplate("tmux://server{?socket}").expand({ socket: odd.socket }),
    new UriTemplate("tmux://agents{?socket}").expand({ socket: odd.socket }),
    `${new UriTemplate("tmux://pane/{pane}").expand({ pane: paneId.slice(1) })}${encoded}`,
  ];
  return [...uris, ...filled];
}

Deno.test("every URI resources/list and the templates give is read, subscribed to and listened to as given", async () => {
  const odd = new OddTmux();
  try {
    const paneId = (await odd.tmux(
      "new-session",
      "-d",
      "-s",
      "odd",
      "-x",
      "80",
      "-y",
      "24",
      "-P",
      "-F",
      "#{pane_id}",
      "/bin/sh",
    )).trim();
    await odd.prompt(paneId);
    await withBashServer(async (t, s) => {
      // 2026-07-28: read and listen.
      const uris = await listedWithOddJob(s, odd, paneId, { _meta: MODERN_META });
      for (const uri of uris) {
        const read = await s.request("resources/read", { uri, _meta: MODERN_META });
        assert.equal(read.error, undefined, `${uri}: ${JSON.stringify(read.error)}`);
      }
      await s.writeLine(listenLine("listed", uris));
      assert.deepEqual(await granted(s, "listed"), uris);
      // 2025-11-25: read and subscribe.
      const legacy = legacyServer(t);
      try {
        await legacy.initialize();
        const listed = await listedWithOddJob(legacy, odd, paneId, {});
        for (const uri of listed) {
          for (const method of ["resources/read", "resources/subscribe"]) {
            const answer = await legacy.request(method, { uri });
            assert.equal(answer.error, undefined, `${method} ${uri}: ${JSON.stringify(answer)}`);
          }
        }
        await legacy.endsCleanly();
      } finally {
        await legacy.kill();
      }
    });
  } finally {
    await odd.kill();
  }
});

Deno.test("the pairs of streams and URIs of one connection are bounded", async () => {
  await withBashServer(async (_t, s) => {
    const uris = Array.from({ length: 8 }, (_, i) => `tmux://pane/${i}`);
    const streams = MAX_LISTEN_PAIRS / uris.length;
    const lines = Array.from({ length: streams + 1 }, (_, i) => listenLine(`s-${i}`, uris));
    await s.writeLine(lines.join("\n"));
    for (let i = 0; i < streams; i++) assert.deepEqual(await granted(s, `s-${i}`), uris);
    assert.deepEqual(await granted(s, `s-${streams}`), []);
    // A stream that ends makes room.
    await s.notify("notifications/cancelled", { requestId: "s-0", _meta: MODERN_META });
    await s.writeLine(listenLine("again", uris));
    assert.deepEqual(await granted(s, "again"), uris);
  });
});

Deno.test("a numeric id past the safe integers is refused with a null id", async () => {
  await withBashServer(async (_t, s) => {
    const meta = JSON.stringify(MODERN_META);
    await s.writeLine(
      `{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/list","params":{"_meta":${meta}}}`,
    );
    await s.writeLine(
      `{"jsonrpc":"2.0","id":9007199254740991,"method":"tools/list","params":{"_meta":${meta}}}`,
    );
    await waitFor(
      () => s.notifications.some((n) => n.id === 9007199254740991),
      "the answer to the safe id",
    );
    const answers = s.notifications.filter((n) => n.method === undefined);
    assert.deepEqual(answers.map((a) => [a.id, a.error?.code ?? null]), [
      [null, -32600],
      [9007199254740991, null],
    ]);
  });
});
