/**
 * With `set-clipboard on`, tmux 3.3a answers a program's clipboard query (`ESC ] 52 ; c ; ?`)
 * with the newest paste buffer, named ones too: a program in any pane could read a text of the
 * agent's while it sat in a buffer. Short texts are filled on the paste's own step and pasted
 * and deleted within it (no one else's query comes between); a long one, loaded just before
 * the step, is refused under that setting, and load_buffer says its buffer can be read so.
 */

import assert from "node:assert/strict";
import { withTmux } from "./helpers/mcp.ts";
import type { StartedTmux } from "./helpers/mcp.ts";
import { waitFor } from "./helpers/tmux.ts";

/** A pane running `cat` into a file: what is pasted there lands in the file. */
async function catPane(t: StartedTmux, file: string): Promise<string> {
  const id = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", `exec cat > '${file}'`))
    .trim();
  await t.foreground(id, "cat");
  return id;
}

async function transientBuffers(t: StartedTmux): Promise<string[]> {
  const names = await t.tmux("list-buffers", "-F", "#{buffer_name}").catch(() => "");
  return names.split("\n").filter((n) => n.startsWith("tmux-mcp-transient"));
}

Deno.test("set-clipboard on: tmux gives the newest buffer to a pane that asks for the clipboard", async () => {
  await withTmux(async (t) => {
    await t.tmux("set-option", "-s", "set-clipboard", "on");
    await t.tmux("set-buffer", "-b", "named", "--", "the newest text");
    const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-test-" });
    try {
      const out = `${dir}/reply`;
      await t.tmux(
        "new-window",
        "-d",
        `stty raw -echo; printf '\\033]52;c;?\\007'; exec cat > '${out}'`,
      );
      const want = btoa("the newest text");
      await waitFor(
        async () => (await Deno.readTextFile(out).catch(() => "")).includes(want),
        "the clipboard's answer",
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("set-clipboard on: a text too long for one step is refused, no buffer left; short texts paste", async () => {
  await withTmux(async (t, c) => {
    const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-test-" });
    try {
      const file = `${dir}/pasted`;
      const id = await catPane(t, file);
      await t.tmux("set-option", "-s", "set-clipboard", "on");
      const long = `SECRET ${"k".repeat(15_000)}\n`;
      const refused = await c.fail("paste_text", { paneId: id, text: long });
      assert.match(refused, /Nothing was pasted.*set-clipboard on.*OSC 52/s);
      assert.match(refused, /parts of at most 10 KB/);
      const command = await c.fail("run_command", {
        paneId: (await t.shellWindow()).paneId,
        command: `: '${"k".repeat(12_000)}'`,
      });
      assert.match(command, /set-clipboard on/);
      await t.tmux("set-buffer", "-b", "persons", "--", long);
      assert.match(
        await c.fail("paste_buffer", { paneId: id, bufferName: "persons" }),
        /set-clipboard on/,
      );
      assert.deepEqual(await transientBuffers(t), []);
      // Short: filled, pasted and deleted in the step itself.
      await c.ok("paste_text", { paneId: id, text: `short ${"s".repeat(9_000)}\n` });
      await waitFor(async () => (await Deno.readTextFile(file)).includes("short "), "the paste");
      assert.ok(!(await Deno.readTextFile(file)).includes("SECRET"));
      // Under tmux's default (external) tmux answers no query: the long text goes in.
      await t.tmux("set-option", "-s", "set-clipboard", "external");
      await c.ok("paste_text", { paneId: id, text: long });
      await waitFor(async () => (await Deno.readTextFile(file)).includes("SECRET"), "the paste");
      assert.deepEqual(await transientBuffers(t), []);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("load_buffer says when any pane's program can read the buffer (set-clipboard on)", async () => {
  await withTmux(async (t, c) => {
    const { summary } = await c.call("load_buffer", { text: "x" }).then((r) => ({
      summary: (r.content as { text: string }[])[0].text,
    }));
    assert.doesNotMatch(summary, /OSC 52/);
    await t.tmux("set-option", "-s", "set-clipboard", "on");
    const again = await c.call("load_buffer", { text: "y" });
    assert.match((again.content as { text: string }[])[0].text, /set-clipboard is on.*OSC 52/s);
  });
});
