/**
 * list_buffers and paste_buffer (issue 17) on real tmux: a buffer's content is hostile input,
 * so its preview spells out every control character and stays short, and a paste pastes a
 * checked copy of it as text (never as keys) under paste_text's guards, or nothing at all. The
 * transient buffer such a paste goes through never outlives it, whatever ends the process.
 */

import assert from "node:assert/strict";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { guardedCalls } from "../src/hooks/guarded_calls.ts";
import { PREVIEW_CHARS, previewOf } from "../src/tools/buffer_preview.ts";
import { withTmux } from "./helpers/mcp.ts";
import { startCommand, StdioServer } from "./helpers/stdio.ts";
import { cleanEnv, HookGate, TestTmux, waitFor } from "./helpers/tmux.ts";

type Server = TestTmux & { ids: { sessionId: string; windowId: string; paneId: string } };

type Listed = {
  complete: boolean;
  omittedEntries: number;
  buffers: {
    name: string;
    size: number;
    created: string;
    preview: string;
    previewComplete: boolean;
    metadataComplete: boolean;
  }[];
};

const files: string[] = [];

addEventListener("unload", () => {
  for (const f of files) {
    try {
      Deno.removeSync(f);
    } catch {
      // already gone
    }
  }
});

/** Loads raw bytes into a named buffer, behind the tools' back (as a person or OSC 52 would). */
async function loadRaw(t: Server, name: string, data: Uint8Array): Promise<void> {
  const file = await Deno.makeTempFile({ prefix: "tmux-mcp-buffer-" });
  files.push(file);
  await Deno.writeFile(file, data);
  // A final ";" would end the command: tmux takes "\\;" for it.
  await t.tmux("load-buffer", "-b", name.replace(/;$/, "\\;"), file);
}

const utf8 = (s: string) => new TextEncoder().encode(s);

/** A pane whose raw terminal writes every byte it receives to a file. */
async function recorder(
  t: Server,
  setup = "",
): Promise<{ paneId: string; windowId: string; read: () => Promise<string> }> {
  const file = await Deno.makeTempFile({ prefix: "tmux-mcp-recorder-" });
  files.push(file);
  const [windowId, paneId] = (await t.tmux(
    "new-window",
    "-d",
    "-P",
    "-F",
    "#{window_id} #{pane_id}",
    `stty raw -echo; printf '${setup}ready'; exec cat > '${file}'`,
  )).trim().split(" ");
  await t.foreground(paneId, "cat");
  // tmux has read the setup (a program asking for bracketed paste) once it shows what follows
  // it: a paste decides on bracketing by what tmux has read.
  await waitFor(
    async () => (await t.tmux("capture-pane", "-p", "-t", paneId)).includes("ready"),
    `${paneId} ready`,
  );
  return {
    paneId,
    windowId,
    read: async () => new TextDecoder().decode(await Deno.readFile(file)),
  };
}

async function bufferNames(t: Server): Promise<string[]> {
  return (await t.tmux("list-buffers", "-F", "#{buffer_name}")).split("\n").filter((l) => l);
}

Deno.test("previewOf: tmux's sample, control characters spelled out, cut on a unit", () => {
  assert.deepEqual(previewOf("a\\033[31mb\\\\c"), { preview: "a\\033[31mb\\\\c", complete: true });
  // C1 controls pass tmux's escaping as valid UTF-8: spelled out here.
  assert.deepEqual(previewOf("x\u009by\u0085"), {
    preview: "x\\302\\233y\\302\\205",
    complete: true,
  });
  // tmux cut at 200 bytes inside an emoji and added "...": both go.
  const cut = "🙂".repeat(49) + "\uFFFD" + "...";
  const p = previewOf(cut);
  assert.equal(p.complete, false);
  assert.equal(p.preview, "🙂".repeat(PREVIEW_CHARS / 2));
  // A buffer that itself ends in "..." within the sample is whole.
  assert.deepEqual(previewOf("wait..."), { preview: "wait...", complete: true });
  // tmux cut inside an octal escape: the partial escape goes, never misread.
  const esc = "a".repeat(198) + "\\0" + "...";
  assert.equal(previewOf(esc).preview, "a".repeat(PREVIEW_CHARS));
});

Deno.test("list_buffers: odd names, escaped previews, sizes and times, newest first", async () => {
  await withTmux(async (t, c) => {
    const empty = await c.ok<Listed>("list_buffers");
    assert.deepEqual(empty, { complete: true, omittedEntries: 0, buffers: [] });

    const odd = "na me 'q' \"d\" #{pane_id} #(x) ;\t🙂;";
    const hostile = "\x1b]0;title\x07\x1b[31mred\u009b\n%end 1 2 1\r\ntab\there \\ 日本🙂";
    await loadRaw(t, odd, utf8(hostile));
    await loadRaw(t, "bad-bytes", new Uint8Array([0x61, 0xff, 0x62, 0x9b, 0x63]));
    await loadRaw(t, "long", utf8("🙂".repeat(300)));
    const before = Date.now();
    const listed = await c.ok<Listed>("list_buffers");
    assert.equal(listed.complete, true);
    assert.deepEqual(listed.buffers.map((b) => b.name), ["long", "bad-bytes", odd]);
    for (const b of listed.buffers) {
      // deno-lint-ignore no-control-regex
      assert.ok(!/[\u0000-\u001f\u007f-\u009f]/.test(b.preview), `raw control in ${b.preview}`);
      assert.ok(b.preview.length <= PREVIEW_CHARS);
      assert.ok(Math.abs(Date.parse(b.created) - before) < 60_000, b.created);
      assert.equal(b.metadataComplete, true);
    }
    const [long, bad, hostileEntry] = listed.buffers;
    assert.equal(long.size, 1200);
    assert.equal(long.previewComplete, false);
    assert.equal(long.preview, "🙂".repeat(PREVIEW_CHARS / 2));
    assert.deepEqual([bad.size, bad.preview, bad.previewComplete], [5, "a\\377b\\233c", true]);
    assert.equal(hostileEntry.size, utf8(hostile).length);
    assert.equal(hostileEntry.previewComplete, true);
    assert.equal(
      hostileEntry.preview,
      "\\033]0;title\\a\\033[31mred\\302\\233\\n%end 1 2 1\\r\\ntab\\there \\\\ 日本🙂",
    );
    // The text block carries no raw control character either (ok() checks it matches).
    const raw = await c.call("list_buffers");
    const text = raw.content?.[0]?.type === "text" ? raw.content[0].text : "";
    // deno-lint-ignore no-control-regex
    assert.ok(!/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/.test(text), text);
  });
});

Deno.test("paste_buffer pastes a copy of the buffer as text, bracketed when asked", async () => {
  await withTmux(async (t, c) => {
    const name = "my buf; #{pane_id} 'q' 🙂";
    const content = "line 1;\nit's $HOME `x` 日本🙂\r\n-end\t;";
    await loadRaw(t, name, utf8(content));
    const rec = await recorder(t);
    const r = await c.ok<{ bytes: number; bracketed: boolean; reachedPanes: string[] }>(
      "paste_buffer",
      { bufferName: name, paneId: rec.paneId },
    );
    const sent = content.replaceAll("\r\n", "\n");
    assert.deepEqual(r, {
      paneId: rec.paneId,
      bufferName: name,
      bytes: utf8(sent).length,
      bracketed: true,
      reachedPanes: [rec.paneId],
    });
    // Not asked for bracketing by cat: newlines arrive as carriage returns, as a person's paste.
    const want = sent.replaceAll("\n", "\r");
    await waitFor(async () => (await rec.read()).length >= want.length, "the paste");
    assert.equal(await rec.read(), sent.replaceAll("\n", "\r"));
    // The person's buffer stays, exactly; no copy of ours is left.
    assert.deepEqual(await bufferNames(t), [name]);
    assert.equal(await t.tmux("show-buffer", "-b", name), content);
  });
});

Deno.test("paste_buffer brackets for a program that asked, and not when bracketed: false", async () => {
  await withTmux(async (t, c) => {
    await loadRaw(t, "two", utf8("a\nb"));
    const rec = await recorder(t, "\\033[?2004h");
    await c.ok("paste_buffer", { bufferName: "two", paneId: rec.paneId });
    await waitFor(async () => (await rec.read()).length >= 15, "the bracketed paste");
    assert.equal(await rec.read(), "\x1b[200~a\rb\x1b[201~");
    const r = await c.ok<{ bracketed: boolean }>("paste_buffer", {
      bufferName: "two",
      paneId: rec.paneId,
      bracketed: false,
    });
    assert.equal(r.bracketed, false);
    await waitFor(async () => (await rec.read()).length >= 18, "the plain paste");
    assert.equal(await rec.read(), "\x1b[200~a\rb\x1b[201~a\rb");
  });
});

Deno.test("paste_buffer refuses control characters, non-UTF-8, missing buffers and bad panes", async () => {
  await withTmux(async (t, c) => {
    const rec = await recorder(t, "\\033[?2004h");
    await loadRaw(t, "esc", utf8("safe\x1b[201~rm -rf ~\r"));
    await loadRaw(t, "c1", utf8("x\u009by"));
    await loadRaw(t, "ctrl-c", utf8("a\x03b"));
    await loadRaw(t, "latin1", new Uint8Array([0x63, 0x61, 0x66, 0xe9]));
    const esc = await c.fail("paste_buffer", { bufferName: "esc", paneId: rec.paneId });
    assert.match(esc, /Buffer "esc" holds ESC \(0x1b\) at character 4/);
    assert.match(esc, /nothing was pasted/);
    assert.match(await c.fail("paste_buffer", { bufferName: "c1", paneId: rec.paneId }), /U\+009B/);
    assert.match(
      await c.fail("paste_buffer", { bufferName: "ctrl-c", paneId: rec.paneId }),
      /C-c \(0x03\) at character 1/,
    );
    assert.match(
      await c.fail("paste_buffer", { bufferName: "latin1", paneId: rec.paneId }),
      /not UTF-8/,
    );
    const missing = await c.fail("paste_buffer", { bufferName: "nope", paneId: rec.paneId });
    assert.match(missing, /No paste buffer "nope"/);
    assert.match(missing, /"esc"/);
    assert.match(missing, /list_buffers/);
    assert.match(
      await c.fail("paste_buffer", { bufferName: "c1", paneId: "%999" }),
      /U\+009B/,
      "the buffer is judged first",
    );
    await loadRaw(t, "fine", utf8("ok"));
    assert.match(
      await c.fail("paste_buffer", { bufferName: "fine", paneId: "%999" }),
      /No pane %999/,
    );
    // Nothing reached the recorder, and no copy of ours was left behind.
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(await rec.read(), "");
    assert.deepEqual(
      (await bufferNames(t)).filter((n) => n.startsWith("tmux-mcp-")),
      [],
    );
  });
});

Deno.test("paste_buffer keeps paste_text's guards: dead, in a mode, watched", async () => {
  await withTmux(async (t, c) => {
    await loadRaw(t, "fine", utf8("echo hi"));
    // A dead pane (remain-on-exit must be on before its process ends).
    const waiting = (await t.tmux(
      "new-window",
      "-d",
      "-P",
      "-F",
      "#{pane_id}",
      "tmux wait-for tools17-go; exit 3",
    )).trim();
    await t.tmux("set-option", "-p", "-t", waiting, "remain-on-exit", "on");
    await t.tmux("wait-for", "-S", "tools17-go");
    await waitFor(
      async () =>
        (await t.tmux("display-message", "-p", "-t", waiting, "#{pane_dead}")).trim() === "1",
      "the pane to die",
    );
    assert.match(await c.fail("paste_buffer", { bufferName: "fine", paneId: waiting }), /dead/);
    // A pane in copy mode.
    const rec = await recorder(t);
    await t.tmux("copy-mode", "-t", rec.paneId);
    // tmux gives a paste to the program under copy mode (keys go to the mode).
    assert.match(
      await c.fail("paste_buffer", { bufferName: "fine", paneId: rec.paneId }),
      /copy-mode; a paste would reach the program unseen/,
    );
    await t.tmux("send-keys", "-t", rec.paneId, "-X", "cancel");
    // A pane a person watches.
    await t.tmux("select-window", "-t", rec.windowId);
    await t.attach("main");
    const watched = await c.fail("paste_buffer", { bufferName: "fine", paneId: rec.paneId });
    assert.match(watched, /watched by a person/);
    assert.match(watched, /--allow-attended-input/);
    assert.equal(await rec.read(), "");
    assert.deepEqual(
      (await bufferNames(t)).filter((n) => n.startsWith("tmux-mcp-")),
      [],
    );
  });
});

Deno.test("the agent hook's guard asks before paste_buffer as before paste_text", () => {
  const [call] = guardedCalls("mcp__tmux__paste_buffer", { bufferName: "b", paneId: "%4" });
  assert.deepEqual(
    { verb: call.verb, targets: call.targets, unclear: call.unclear },
    { verb: "paste into", targets: [{ kind: "pane", id: "%4" }], unclear: undefined },
  );
});

Deno.test("load_buffer refuses line breaks and control characters: a person's plain paste then pastes their own copy", async () => {
  await withTmux(async (t, c) => {
    // The person copied this earlier; their prefix ] is a plain paste-buffer (no -b), which
    // pastes the newest buffer (tmux 3.3a: named ones too, so a buffer loaded here).
    await t.tmux("set-buffer", "PERSONS-OWN-COPY");
    const bad: [string, RegExp][] = [
      ["touch /tmp/planted\n", /newline \(0x0a\) at character 18/],
      ["a\rb", /carriage return \(0x0d\) at character 1/],
      ["a\r\nb", /carriage return \(0x0d\) at character 1/],
      ["a\u2028b", /U\+2028 at character 1/],
      ["a\u2029b", /U\+2029 at character 1/],
      ["a\u0085b", /U\+0085 at character 1/],
      ["safe\x1b[201~", /ESC \(0x1b\) at character 4/],
      ["a\x03b", /C-c \(0x03\) at character 1/],
      ["a\x7fb", /DEL \(0x7f\) at character 1/],
      ["x\u009by", /U\+009B at character 1/],
    ];
    for (const [text, why] of bad) {
      const refusal = await c.fail("load_buffer", { text, name: "plant" });
      assert.match(refusal, why, JSON.stringify(text));
      assert.match(refusal, /prefix \]/);
      assert.match(refusal, /Nothing was stored/);
      assert.match(refusal, /paste_text/);
    }
    assert.deepEqual((await bufferNames(t)).filter((n) => n.startsWith("tmux-mcp-")), []);
    const rec = await recorder(t);
    await t.tmux("paste-buffer", "-t", rec.paneId);
    await waitFor(async () => (await rec.read()).length >= 16, "the person's paste");
    assert.equal(await rec.read(), "PERSONS-OWN-COPY");
  });
});

Deno.test("load_buffer takes one line of text (tabs too), and paste_buffer pastes it", async () => {
  await withTmux(async (t, c) => {
    const text = "echo 'one'\tline; #{pane_id} 🙂";
    const r = await c.ok<{ bufferName: string; bytes: number }>("load_buffer", { text });
    assert.equal(await t.tmux("show-buffer", "-b", r.bufferName), text);
    const rec = await recorder(t);
    await c.ok("paste_buffer", { bufferName: r.bufferName, paneId: rec.paneId });
    await waitFor(async () => (await rec.read()).length >= text.length, "the paste");
    assert.equal(await rec.read(), text);
    // The loaded buffer stays (delete_buffer removes it); the pasted copy does not.
    assert.deepEqual((await bufferNames(t)).filter((n) => n.startsWith("tmux-mcp-")), [
      r.bufferName,
    ]);
  });
});

// A text too long for the guarded step's own line is loaded just before it, by a tmux process
// of its own (typing.ts, pasteTransient): the process may end in between. SIGHUP is what it
// gets when the terminal its MCP client runs in is closed.
for (const how of ["SIGTERM", "SIGHUP", "stdin EOF"] as const) {
  Deno.test(`a long paste_text whose process ends (${how}) between its load and its paste leaves no buffer of ours`, async () => {
    const t = await TestTmux.start();
    const gate = await HookGate.make();
    const { cmd, args } = startCommand();
    const s = new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv());
    try {
      await s.initialize();
      // A slow moment right after the load (a person's hook), which the test holds.
      await t.tmux("set-hook", "-g", "after-load-buffer", gate.command);
      const text = "echo agent-text ".repeat(1_300); // about 20 KB: loaded, not on the line
      s.callTool("paste_text", { paneId: t.ids.paneId, text }).catch(() => {});
      await waitFor(() => gate.began(), "the load to be held");
      assert.equal((await bufferNames(t)).filter((n) => n.startsWith("tmux-mcp-")).length, 1);
      if (how === "stdin EOF") await s.closeStdin();
      else s.child.kill(how);
      await s.child.status;
      // Deleted by the process on its way out: the person's prefix ] pastes nothing of ours.
      assert.deepEqual((await bufferNames(t)).filter((n) => n.startsWith("tmux-mcp-")), []);
    } finally {
      await gate.open();
      await s.kill();
      await t.kill();
      await gate.remove();
    }
  });
}

// A short text fills its transient buffer on the guarded step's own command line (typing.ts,
// pasteTransient): a person's slow after-set-buffer hook holds that line after the fill,
// before the paste that deletes it, and the call may end there.
for (const how of ["SIGTERM", "stdin EOF", "cancelled"] as const) {
  Deno.test(`a short paste_text held after its fill by a person's hook, the call ended (${how}): no buffer of ours is left`, async () => {
    const t = await TestTmux.start();
    const gate = await HookGate.make();
    const { cmd, args } = startCommand();
    const s = new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv());
    try {
      await s.initialize(); // request 1
      // Warm the control connection so that the step goes over it, as it usually does.
      await s.callTool("list_panes"); // request 2
      await t.tmux("set-hook", "-g", "after-set-buffer", gate.command);
      s.callTool("paste_text", { paneId: t.ids.paneId, text: "echo agent-one\necho agent-two" })
        .catch(() => {}); // request 3
      await waitFor(() => gate.began(), "the fill to be held");
      if (how === "SIGTERM") s.child.kill("SIGTERM");
      else if (how === "stdin EOF") await s.closeStdin();
      else {
        await s.notify("notifications/cancelled", { requestId: 3, reason: "test" });
        // The person's next look at tmux comes after the call is over for the client.
        await s.callTool("list_panes");
        await s.closeStdin();
      }
      await s.child.status;
      assert.deepEqual(
        (await bufferNames(t)).filter((n) => n.startsWith("tmux-mcp-")),
        [],
        "a buffer of ours left for the person's prefix ]",
      );
    } finally {
      await gate.open();
      await s.kill();
      await t.kill();
      await gate.remove();
    }
  });
}

// ---------------------------------------------------------------------------------------------
// The bound on tmux-mcp's buffers: named buffers escape tmux's buffer-limit and nothing removes
// them, so without one a loop of load_buffer calls (4 MiB each) piles up in the tmux server.

const ours = async (t: Server) =>
  (await bufferNames(t)).filter((n) => n.startsWith("tmux-mcp-")).sort();

Deno.test("load_buffer keeps at most 16 buffers of tmux-mcp's: a new one past them is refused, a replacement is not", async () => {
  await withTmux(async (t, c) => {
    // The person's own buffers are theirs, and never count.
    for (let i = 0; i < 20; i++) await t.tmux("set-buffer", `person's copy ${i}`);
    const loaded: string[] = [];
    for (let i = 0; i < 15; i++) {
      loaded.push(
        (await c.ok<{ bufferName: string }>("load_buffer", { text: `b${i}` })).bufferName,
      );
    }
    loaded.push(
      (await c.ok<{ bufferName: string }>("load_buffer", { text: "n", name: "notes" }))
        .bufferName,
    );
    for (const args of [{ text: "one more" }, { text: "one more", name: "other" }]) {
      const refusal = await c.fail("load_buffer", args);
      assert.match(refusal, /16 buffers/);
      assert.match(refusal, /Nothing was stored/);
      assert.match(refusal, /delete_buffer/);
      assert.match(refusal, /list_buffers/);
    }
    assert.deepEqual(await ours(t), loaded.sort());
    // Replacing one by name adds no buffer.
    const again = await c.ok<{ replaced: boolean }>("load_buffer", { text: "n2", name: "notes" });
    assert.equal(again.replaced, true);
    assert.equal(await t.tmux("show-buffer", "-b", "tmux-mcp-notes"), "n2");
    // A paste goes through a transient buffer of ours: the bound never stops it.
    const text = "echo agent-text ".repeat(1_300); // about 20 KB: loaded, not on the line
    await c.ok("paste_text", { paneId: t.ids.paneId, text });
    await c.ok("paste_text", { paneId: t.ids.paneId, text: "echo short" });
    assert.deepEqual(await ours(t), loaded.sort());
    // Deleting one makes room for one.
    await c.ok("delete_buffer", { bufferName: loaded[0] });
    await c.ok("load_buffer", { text: "x", name: "other" });
    assert.equal((await ours(t)).length, 16);
    assert.equal((await bufferNames(t)).length, 36);
  });
});

Deno.test("load_buffer: calls at once cannot pass the bound of 16 buffers", async () => {
  await withTmux(async (t, c) => {
    const results = await Promise.all(
      Array.from({ length: 24 }, (_, i) => c.call("load_buffer", { text: `at once ${i}` })),
    );
    assert.equal(results.filter((r: CallToolResult) => r.isError !== true).length, 16);
    assert.equal((await ours(t)).length, 16);
  }, { toolsets: ["inspect", "manage"] });
});

Deno.test("load_buffer keeps tmux-mcp's buffers to 16 MiB in all; a replacement may not raise them past it", async () => {
  await withTmux(async (t, c) => {
    const MiB = 1024 * 1024;
    for (const name of ["a", "b", "c"]) {
      await c.ok("load_buffer", { text: name.repeat(4 * MiB), name });
    }
    await c.ok("load_buffer", { text: "d", name: "d" });
    await c.ok("load_buffer", { text: "e", name: "e" });
    // 12 MiB + 2 bytes: d grows to fill 16 MiB exactly.
    await c.ok("load_buffer", { text: "d".repeat(4 * MiB - 1), name: "d" });
    const refusal = await c.fail("load_buffer", { text: "ee", name: "e" });
    assert.match(refusal, /16 MiB/);
    assert.match(refusal, /delete_buffer/);
    assert.match(await c.fail("load_buffer", { text: "f" }), /16 MiB/);
    assert.equal(await t.tmux("show-buffer", "-b", "tmux-mcp-e"), "e");
    // A replacement that lowers the total, or keeps it, is taken.
    await c.ok("load_buffer", { text: "D", name: "d" });
    await c.ok("load_buffer", { text: "A".repeat(4 * MiB), name: "a" });
    await c.ok("load_buffer", { text: "f" });
    assert.equal((await ours(t)).length, 6);
  });
});

Deno.test("show_buffer says how many bytes are not UTF-8, and that the text is then not the buffer's", async () => {
  await withTmux(async (t, c) => {
    type Shown = {
      size: number;
      text: string;
      complete: boolean;
      undecodableBytes: number;
      returnedBytes: number;
    };
    await loadRaw(t, "ff", new Uint8Array(100).fill(0xff));
    const ff = await c.ok<Shown>("show_buffer", { name: "ff" });
    assert.equal(ff.size, 100);
    assert.equal(ff.text, "\uFFFD".repeat(100));
    assert.equal(ff.undecodableBytes, 100);
    assert.equal(ff.complete, false);
    // Mixed: a sequence cut short counts each of its bytes; whole ones none.
    await loadRaw(
      t,
      "mixed",
      new Uint8Array([0x63, 0xe9, 0x20, 0xe2, 0x82, 0x20, 0xe2, 0x82, 0xac]),
    );
    const mixed = await c.ok<Shown>("show_buffer", { name: "mixed" });
    assert.equal(mixed.undecodableBytes, 3);
    await c.ok("load_buffer", { text: "caf\u00e9 \u20ac", name: "plain" });
    const plain = await c.ok<Shown>("show_buffer", { name: "tmux-mcp-plain" });
    assert.equal(plain.undecodableBytes, 0);
    assert.equal(plain.complete, true);
    // A buffer read as it streams (past 4 MiB) is counted alike.
    await loadRaw(t, "big", new Uint8Array(5_000_000).fill(0xff));
    const big = await c.ok<Shown>("show_buffer", { name: "big" });
    assert.equal(big.undecodableBytes, 5_000_000);
    assert.equal(big.complete, false);
  });
});
