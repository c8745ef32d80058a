/**
 * A whole reply — its text block and its structured content, as JSON on the wire — stays
 * within the bound, even for the tools whose arguments or stored values are large.
 */

import assert from "node:assert/strict";
import { jsonStringBytes, MAX_RESULT_BYTES, replyBound, textBound } from "../src/mcp/bounds.ts";
import { MAX_FAILURE_BYTES } from "../src/mcp/errors.ts";
import { connect, withTmux } from "./helpers/mcp.ts";
import { parseRendered } from "./helpers/rendered.ts";
import { type TestTmux, waitFor } from "./helpers/tmux.ts";

function wire(result: unknown): number {
  return new TextEncoder().encode(JSON.stringify(result)).length;
}

Deno.test("show_option of a huge value and a 64-row batch of long texts stay within the bound", async () => {
  await withTmux(async (t, c) => {
    // tmux takes at most ~16 KB per command: build the value in parts.
    for (let i = 0; i < 4; i++) await t.tmux("set-option", "-ag", "@huge", "é".repeat(7_000));
    const shown = await c.call("show_option", { name: "@huge", scope: "session", global: true });
    assert.notEqual(shown.isError, true);
    assert.ok(wire(shown) <= replyBound(), `show_option: ${wire(shown)} bytes`);
    const text = (shown.content as { text: string }[])[0].text;
    assert.ok(text.length <= textBound());
    assert.deepEqual(parseRendered(text).data, shown.structuredContent);
    const data = shown.structuredContent as { value: string; entries: { omittedBytes?: number }[] };
    assert.ok(data.value.length < 28_000, "the value is cut, and says so");

    const sink = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "cat"))
      .trim();
    await waitFor(
      async () =>
        (await t.tmux("display-message", "-p", "-t", sink, "#{pane_current_command}")).trim() ===
          "cat",
      "cat",
    );
    const batch = await c.call("send_keys_batch", {
      operations: Array.from({ length: 64 }, (_, i) => ({
        paneId: sink,
        text: `${i} ${"x".repeat(8_000)}`,
        enter: false,
      })),
    });
    assert.notEqual(batch.isError, true);
    assert.equal((batch.structuredContent as { sent: number }).sent, 64);
    assert.ok(wire(batch) <= replyBound(), `send_keys_batch: ${wire(batch)} bytes`);
    // Failing rows (a pane that does not exist) are bounded the same way.
    const failing = await c.call("send_keys_batch", {
      onError: "continue",
      operations: Array.from({ length: 64 }, () => ({ paneId: "%999999", text: "x" })),
    });
    assert.equal((failing.structuredContent as { failed: number }).failed, 64);
    assert.ok(wire(failing) <= replyBound(), `failing rows: ${wire(failing)} bytes`);
  });
});

Deno.test("controls that cost more as text than as JSON cannot push a reply past the bound", async () => {
  await withTmux(async (t, c) => {
    // A backspace is two bytes in the structured content (`\b`) but `\x08` in the text: five
    // bytes on the wire. A C1 character in a name: two bytes there, `\u0085` (seven) in the text.
    const file = await Deno.makeTempFile();
    try {
      await Deno.writeTextFile(file, `${"\b".repeat(79)}\n`.repeat(1_500));
      await t.tmux("load-buffer", "-b", "b1", file);
    } finally {
      await Deno.remove(file);
    }
    for (let i = 0; i < 60; i++) {
      await t.tmux("new-window", "-d", "-n", `${"\u0085".repeat(300)}${i}`, "cat");
    }
    for (
      const [tool, args] of [
        ["show_buffer", { name: "b1" }],
        ["list_windows", {}],
        ["list_panes", {}],
        ["get_session_info", { session: t.ids.sessionId }],
      ] as const
    ) {
      const result = await c.call(tool, args);
      assert.notEqual(result.isError, true, tool);
      assert.ok(wire(result) <= replyBound(), `${tool}: ${wire(result)} bytes on the wire`);
      const text = (result.content as { text: string }[])[0].text;
      assert.ok(wire(text) <= textBound() + 2, `${tool}: text ${wire(text)} bytes on the wire`);
      // Cut or not, every block the text opens is closed, and what it omitted is said.
      let fence: string | null = null;
      for (const line of text.split("\n").slice(1)) {
        if (fence === null && /^`{3,}$/.test(line)) fence = line;
        else if (fence !== null && line === fence) fence = null;
      }
      assert.equal(fence, null, `${tool}: a block left open`);
      const data = result.structuredContent as Record<string, unknown>;
      for (const fact of ["complete", "omittedEntries", "omittedWindows"]) {
        if (fact in data) assert.ok(text.includes(`\n${fact}: ${data[fact]}`), `${tool}: ${fact}`);
      }
    }
  });
});

Deno.test("run_command output of quotes and backslashes stays within the bound, as tool and job", async () => {
  await withTmux(async (t, c) => {
    await t.prompt(t.ids.paneId);
    const line = '"\\'.repeat(55); // every character escaped on the wire
    const command = `i=0; while [ $i -lt 500 ]; do printf '%s\\n' '${line}'; i=$((i+1)); done`;
    const ran = await c.call("run_command", { paneId: t.ids.paneId, command, timeoutMs: 30_000 });
    assert.notEqual(ran.isError, true, JSON.stringify(ran.content));
    assert.ok(wire(ran) <= replyBound(), `run_command: ${wire(ran)} bytes`);
    const data = ran.structuredContent as { output: string; outputComplete: boolean };
    assert.equal(data.outputComplete, false);
    assert.ok(data.output.endsWith(line), "the end is kept");
    // The same as a background job, read back by tool and as a resource.
    const job = await c.call("run_command", {
      paneId: t.ids.paneId,
      command: `${command}; sleep 30`,
      background: true,
    });
    const { jobId } = job.structuredContent as { jobId: string };
    const read = await c.call("get_command_result", { jobId, waitMs: 2_000 });
    assert.ok(wire(read) <= replyBound(), `get_command_result: ${wire(read)} bytes`);
    const resource = await c.client.readResource({ uri: `tmux://job/${jobId}?socket=${t.socket}` });
    assert.ok(wire(resource) <= replyBound(), `job resource: ${wire(resource)} bytes`);
    await t.tmux("send-keys", "-t", t.ids.paneId, "C-c");
  });
});

Deno.test("one long line of quotes (minified JSON) is sent within the bound, and what it lacks is said", async () => {
  await withTmux(async (t, c) => {
    await t.prompt(t.ids.paneId);
    const file = await Deno.makeTempFile();
    try {
      await Deno.writeTextFile(file, '"'.repeat(60_000));
      await t.tmux("load-buffer", "-b", "quotes", file);
    } finally {
      await Deno.remove(file);
    }
    // tmux takes at most ~16 KB per command: build the value in parts.
    for (let i = 0; i < 4; i++) await t.tmux("set-option", "-ags", "@quotes", '"'.repeat(5_000));
    const calls = [
      ["run_command", {
        paneId: t.ids.paneId,
        command: `printf '%s\\n' "$(head -c 40000 /dev/zero | tr '\\0' '"')"`,
        timeoutMs: 30_000,
      }],
      ["show_buffer", { name: "quotes" }],
      ["show_option", { name: "@quotes", scope: "server" }],
      ["set_option", { name: "@quotes2", value: '"'.repeat(20_000), scope: "server" }],
    ] as const;
    for (const [tool, args] of calls) {
      const result = await c.call(tool, args);
      assert.notEqual(result.isError, true, `${tool}: ${JSON.stringify(result.content)}`);
      assert.ok(wire(result) <= replyBound(), `${tool}: ${wire(result)} bytes on the wire`);
      const text = (result.content as { text: string }[])[0].text;
      assert.ok(wire(text) <= textBound() + 2, `${tool}: text ${wire(text)} bytes on the wire`);
      const data = result.structuredContent as Record<string, unknown>;
      // The structured content says what the tool cut from the value...
      const cut = data.outputComplete === false || data.complete === false ||
        data.metadataComplete === false ||
        (data.entries as { metadataComplete: boolean }[] | undefined)?.[0]?.metadataComplete ===
          false;
      assert.ok(cut, `${tool}: the value was cut, and says so`);
      // ... and the text carries every field, or says where it stopped and what it left out.
      if (text.includes("\n[text cut here: ")) {
        assert.match(text, /\n\[text cut here: .*\(\d+ characters\) left out/);
      } else assert.deepEqual(parseRendered(text).data, data, tool);
      assert.ok(text.includes('""""""""""'), `${tool}: the quotes are shown as they are`);
    }
  });
});

Deno.test("show_option of an array whose entries together pass the bound keeps the ones that fit", async () => {
  await withTmux(async (t, c) => {
    // Six entries of 15 000 characters: each within the cut of one value, together past the bound.
    for (let i = 2; i < 8; i++) {
      await t.tmux("set-option", "-g", `status-format[${i}]`, String(i).repeat(15_000));
    }
    const shown = await c.call("show_option", {
      name: "status-format",
      scope: "session",
      global: true,
    });
    const text = (shown.content as { text: string }[])[0].text;
    assert.notEqual(shown.isError, true, text.slice(0, 300));
    assert.ok(wire(shown) <= replyBound(), `show_option: ${wire(shown)} bytes`);
    const data = shown.structuredContent as {
      set: boolean;
      complete: boolean;
      omittedEntries: number;
      entries: { name: string }[];
    };
    assert.equal(data.set, true);
    assert.equal(data.complete, false);
    // tmux's own entries 0 and 1 and the six set here: every one is kept or counted.
    assert.equal(data.entries.length + data.omittedEntries, 8);
    assert.ok(data.omittedEntries >= 1);
    assert.match(text, /left out/);
  });
});

/** The `_meta` a tool is listed with. */
async function listedMeta(
  c: { client: { listTools(): Promise<{ tools: { name: string; _meta?: unknown }[] }> } },
  name: string,
): Promise<Record<string, unknown>> {
  const { tools } = await c.client.listTools();
  return (tools.find((tool) => tool.name === name)?._meta ?? {}) as Record<string, unknown>;
}

Deno.test("tools whose answers fill the bound say so to clients (maxResultSizeChars): a job's output, many buffers", async () => {
  await withTmux(async (t, c) => {
    const started = await c.ok<{ jobId: string }>("run_command", {
      paneId: t.ids.paneId,
      command: "i=0; while [ $i -lt 1500 ]; do printf '%0190d\\n' $i; i=$((i+1)); done",
      background: true,
    });
    const job = await c.call("get_command_result", { jobId: started.jobId, waitMs: 60_000 });
    assert.equal((job.structuredContent as { state: string }).state, "exited");
    const chars = (job.content as { text: string }[])[0].text.length;
    assert.ok(chars > 40_000, `the answer is near the bound (${chars} characters)`);
    assert.ok("anthropic/maxResultSizeChars" in await listedMeta(c, "get_command_result"));

    for (let i = 0; i < 400; i++) {
      await t.tmux("set-buffer", "-b", `b${i}`, `${i}`.padEnd(100, "x"));
    }
    const buffers = await c.call("list_buffers");
    assert.equal((buffers.structuredContent as { complete: boolean }).complete, false);
    assert.ok("anthropic/maxResultSizeChars" in await listedMeta(c, "list_buffers"));
  });
});

/** A result's text block. */
function textOf(result: { content?: unknown }): string {
  const content = result.content as { type: string; text: string }[] | undefined;
  return content?.[0]?.type === "text" ? content[0].text : "";
}

/** A new detached session named `name` running `sleep`: its id. */
async function sleepingSession(t: TestTmux, name: string): Promise<string> {
  const id = await t.tmux(
    "new-session",
    "-d",
    "-P",
    "-F",
    "#{session_id}",
    "-s",
    name,
    "sleep 1000",
  );
  return id.trim();
}

Deno.test("get_pane_info and find_pane_by_position of a pane whose names, path and mark cost escapes stay within the bound", async () => {
  // A folder of control characters (a line break among them), the owner mark (any program in a
  // pane can set it) of control characters, a window name, argv[0] and start command of
  // backslashes, a title of quotes, the window linked into three sessions: each is 2 048 bytes
  // or more as UTF-8, and up to six times that as JSON.
  const root = await Deno.makeTempDir({ prefix: "tmux-mcp-bound-" });
  try {
    let dir = root;
    for (let i = 0; i < 10; i++) {
      dir = `${dir}/${i === 0 ? "\n" : ""}${"\x01".repeat(250)}`;
      await Deno.mkdir(dir);
    }
    await withTmux(async (t, c) => {
      const command = `exec -a '${"\\".repeat(2100)}x' sleep 1000 #${"\\".repeat(1200)}`;
      const pane = (await t.tmux(
        "new-window",
        "-d",
        "-c",
        dir,
        "-P",
        "-F",
        "#{pane_id}",
        "bash",
        "-c",
        command,
      )).trim();
      await waitFor(
        async () =>
          (await t.tmux("display-message", "-p", "-t", pane, "#{pane_current_command}"))
            .length > 2048,
        "argv[0] in place",
      );
      await t.tmux("rename-window", "-t", pane, "\\".repeat(2100));
      for (let i = 0; i < 3; i++) {
        const sid = await sleepingSession(t, `${"\\".repeat(990)}${i}`);
        await t.tmux("link-window", "-d", "-s", pane, "-t", `${sid}:7`);
      }
      await t.tmux("select-pane", "-t", pane, "-T", '"'.repeat(2100));
      await t.tmux("set-option", "-p", "-t", pane, "@tmux-mcp-owner", "\x01".repeat(2100));
      const windowId = (await t.tmux("display-message", "-p", "-t", pane, "#{window_id}")).trim();
      // The default bound, and a small one the whole object must fit as well.
      const small = await connect({ socketName: t.socket, maxResultBytes: 12_000 });
      try {
        for (const [client, bound] of [[c, MAX_RESULT_BYTES], [small, 12_000]] as const) {
          for (
            const [tool, args] of [
              ["get_pane_info", { paneId: pane }],
              ["find_pane_by_position", { windowId, position: "top-left" }],
            ] as const
          ) {
            const result = await client.call(tool, args);
            assert.notEqual(result.isError, true, `${tool}: ${textOf(result)}`);
            assert.ok(wire(result) <= replyBound(bound), `${tool}: ${wire(result)} bytes`);
            const data = result.structuredContent as {
              metadataComplete: boolean;
              omittedMetadataBytes: number;
              cwd: string;
              owner: string;
            };
            assert.ok(wire(data) <= bound, `${tool}: structured content ${wire(data)} bytes`);
            assert.equal(data.metadataComplete, false);
            assert.ok(data.omittedMetadataBytes > 0);
            assert.ok(dir.startsWith(data.cwd), `${tool}: the folder is cut at its end`);
            assert.ok(
              data.owner.length > 0 && "\x01".repeat(2100).startsWith(data.owner),
              `${tool}: the mark is cut at its end`,
            );
          }
        }
      } finally {
        await small.close();
      }
    });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a refusal listing where a window is linked names a few sessions, each cut, within the bound", async () => {
  await withTmux(async (t, c) => {
    const w = (await t.tmux("new-window", "-d", "-P", "-F", "#{window_id}", "sleep 1000")).trim();
    const other = await sleepingSession(t, "other");
    for (let i = 0; i < 6; i++) {
      // tmux stores each backslash of a session name twice.
      const sid = await sleepingSession(t, `${"\\".repeat(15_000)}${i}`);
      await t.tmux("link-window", "-d", "-s", w, "-t", `${sid}:7`);
    }
    const refusals = [
      // Which of its seven sessions to act in: ambiguous.
      ["select_window", { windowId: w }, /is linked into 7 sessions \(.* and 2 more\), so/],
      // Not in the session named: the hint says where it is.
      [
        "move_window",
        { windowId: w, session: "main", fromSession: other },
        /It is in .* and 2 more\./,
      ],
      ["list_panes", { session: other, window: w }, /It is in .* and 2 more\./],
    ] as const;
    for (const [tool, args, said] of refusals) {
      const result = await c.call(tool, args);
      assert.equal(result.isError, true, tool);
      const text = textOf(result);
      assert.match(text, said);
      assert.ok(text.length < 2_000, `${tool}'s refusal: ${text.length} characters`);
      assert.doesNotMatch(text, /bytes cut/, `${tool}: the names are cut, not the refusal`);
    }
  });
});

Deno.test("set_option's refusal of a long value stays within the bound, cut and saying so", async () => {
  await withTmux(async (_t, c) => {
    // 60 000 characters, within the schema's 65 536: tmux echoes the value in its refusal.
    const result = await c.call("set_option", {
      name: "mouse",
      scope: "session",
      global: true,
      value: "x".repeat(60_000),
    });
    assert.equal(result.isError, true);
    const text = textOf(result);
    assert.match(text, /^tmux refused: bad value: x+… \(\d+ bytes cut\)$/);
    assert.ok(jsonStringBytes(text) <= MAX_FAILURE_BYTES, `${jsonStringBytes(text)} bytes`);
  });
});

Deno.test("a refusal listing a person's long buffer names keeps its hint whole and splits no escape", async () => {
  await withTmux(async (t, c) => {
    for (let i = 0; i < 12; i++) {
      await t.tmux("set-buffer", "-b", `${"\x1b".repeat(400)}${i}`, "x");
    }
    for (
      const [tool, args] of [
        ["paste_buffer", { bufferName: "tmux-mcp-nope", paneId: t.ids.paneId }],
        ["show_buffer", { name: "tmux-mcp-nope" }],
      ] as const
    ) {
      const text = await c.fail(tool, args);
      assert.ok(jsonStringBytes(text) <= MAX_FAILURE_BYTES, `${tool}: ${text.length}`);
      assert.match(text, /list_buffers lists them|Buffers: /, `${tool}: ${text.slice(-300)}`);
      assert.match(text, / and \d+ more/, `${tool}: ${text.slice(-300)}`);
      assert.doesNotMatch(text, /\\(?:u[0-9a-fA-F]{0,3})?…/, `${tool}: ${text.slice(-300)}`);
    }
  }, { toolsets: ["inspect", "manage", "execute", "teardown"] });
});
