/**
 * The row a wait starts on, as tmux tells it: where tmux's cursor falls among the row's
 * characters (emoji tmux draws one column wide, decomposed Hangul, characters tmux cannot
 * measure, which are never given to #{w:}), so old text before the cursor is never new; and the
 * rows capture-pane -J -S y gives, made from two reads at one instant.
 */

import assert from "node:assert/strict";
import { cellIndex, widthOf } from "../src/tools/cell_width.ts";
import { rowsFrom } from "../src/tools/captured_rows.ts";
import { TmuxRunner } from "../src/tmux/run.ts";
import { testContext } from "./helpers/mcp.ts";
import { HookGate, waitFor } from "./helpers/tmux.ts";
import { subscribed, type Wait, withServer } from "./helpers/wait_text.ts";

// Where the start row's cursor falls among its characters is tmux's to say: tmux 3.3a (without
// utf8proc) takes widths from the C library's wcwidth, which gives many emoji one column (🛠
// U+1F6E0, East Asian Width "neutral"), and the vowels and finals of decomposed Hangul (NFD, as
// macOS names files) none. A table of the watch's own put the cursor inside the old text.
for (
  const [what, prompt, columns] of [
    ["emoji tmux draws one column wide (🛠)", "🛠🛠🛠🛠 ready> ", 12],
    ["Hangul in decomposed form (NFD)", "\u1112\u1161\u11ab\u1100\u1173\u11af ready> ", 12],
  ] as const
) {
  Deno.test(`wait_for_text does not take old text before the cursor for new when the row has ${what}`, async () => {
    const gate = await HookGate.make();
    try {
      await withServer(async (t, c) => {
        const id = await t.showing(
          `sh -c "printf '${prompt}'; read x; printf 'DO%sNE\\n' ''; sleep 100"`,
          "ready>",
        );
        assert.equal(
          (await t.tmux("display-message", "-p", "-t", id, "#{cursor_x}")).trim(),
          String(columns),
          "tmux's own columns",
        );
        // The watch's first look at the pane is held until the pane has written more (a busy
        // pane writing while the watch begins).
        await t.tmux(
          "set-hook",
          "-g",
          "after-display-message",
          `if-shell -F '#{m:*pane_width*history_limit*alternate_on*,#{hook_arguments}}' { ${gate.command} }`,
        );
        const waiting = c.ok<Wait>("wait_for_text", {
          paneId: id,
          patterns: ["ready", "DONE"],
          timeoutMs: 20_000,
        });
        await waitFor(() => gate.began(), "the watch's first look to be held");
        await t.tmux("send-keys", "-t", id, "-l", "a");
        await waitFor(
          async () => (await t.tmux("capture-pane", "-p", "-t", id)).includes("ready> a"),
          "the typed a",
        );
        await gate.open();
        await t.tmux("send-keys", "-t", id, "Enter");
        const r = await waiting;
        assert.equal(
          r.matched?.pattern,
          "DONE",
          `"ready" was on screen before: ${JSON.stringify(r)}`,
        );
      });
    } finally {
      await gate.remove();
    }
  });
}

Deno.test("text typed at a prompt with emoji tmux draws one column wide is told without the prompt", async () => {
  await withServer(async (t, c) => {
    const id = await t.showing(`sh -c "printf '🛠🛠 P> '; read x; sleep 100"`, "P>");
    const waiting = c.ok<Wait>("wait_for_text", { paneId: id, patterns: ["GO"] });
    await subscribed(t, c);
    await t.tmux("send-keys", "-t", id, "-l", "GO");
    const r = await waiting;
    assert.equal(r.outcome, "matched");
    assert.deepEqual(r.lines, ["GO"]);
  });
});

Deno.test("cellIndex puts a column where tmux's cursor is, whatever the characters", async () => {
  await withServer(async (t) => {
    const runner = new TmuxRunner();
    const ctx = testContext(runner, t.socket);
    const pid = Number((await t.tmux("display-message", "-p", "#{pid}")).trim());
    try {
      for (
        const text of [
          "plain > ",
          "🛠🛠🛠🛠 ready> ",
          "\u1112\u1161\u11ab\u1100\u1173\u11af> ",
          "日本語 ｱｲ> ",
          "e\u0301e\u0301 🙂 ❯ ",
          "x\u202aab\u202c \ufeffx\u2066y\u2069> ",
          "#{pane_id} }{,:# ünï ",
        ]
      ) {
        const id = await t.showing(`printf '%s' '${text}'; sleep 100`, text.slice(0, 1));
        const [x, row] = (await t.tmux(
          "display-message",
          "-p",
          "-t",
          id,
          "#{cursor_x}",
          ";",
          "capture-pane",
          "-p",
          "-N",
          "-t",
          id,
          "-S",
          "0",
          "-E",
          "0",
        )).split("\n");
        const column = Number(x);
        assert.equal(await cellIndex(ctx, pid, row, column), text.length, JSON.stringify(text));
        // And blanks past the row's end count one column each.
        assert.equal(await cellIndex(ctx, pid, row, column + 3), text.length + 3);
        await t.tmux("kill-pane", "-t", id);
      }
    } finally {
      await runner.close();
    }
  });
});

Deno.test("a character tmux cannot measure is never given to #{w:} (tmux 3.3a loops for ever there)", async () => {
  await withServer(async (t) => {
    // U+0378 is reserved for good; U+1FAE8 is unassigned in older C libraries. tmux drops both
    // from a pane, and its #{w:} of either never returns: the whole server stops.
    const cases: [string, RegExp][] = [
      ["\u0378", /^(-|\d)$/],
      ["\u{1FAE8}", /^(-|\d)$/],
      ["漢", /^2$/],
      ["é", /^1$/],
    ];
    for (const [ch, expected] of cases) {
      const answer = await new Deno.Command("tmux", {
        args: ["-L", t.socket, "display-message", "-p", widthOf(ch)],
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(10_000),
      }).output();
      assert.equal(answer.success, true, `tmux answered for U+${ch.codePointAt(0)!.toString(16)}`);
      assert.match(new TextDecoder().decode(answer.stdout).trim(), expected);
    }
    assert.equal((await t.tmux("display-message", "-p", "ok")).trim(), "ok");
  });
});

Deno.test("rowsFrom gives what capture-pane -J -S y gives, or nothing, from two reads at one instant", async () => {
  await withServer(async (t) => {
    const lines = (s: string) => s.split("\n").slice(0, -1);
    // A pane ten columns wide (before it prints: a resize would reflow the rows).
    const narrow = async (print: string) => {
      const id = (await t.tmux(
        ...["new-window", "-d", "-P", "-F", "#{pane_id}"],
        "sh",
        "-c",
        `while [ "$(stty size | cut -d' ' -f2)" != 10 ]; do sleep 0.02; done; ${print}; sleep 100`,
      )).trim();
      await t.tmux("resize-window", "-t", id, "-x", "10");
      await waitFor(
        async () => (await t.tmux("capture-pane", "-p", "-t", id)).includes("end>"),
        "end>",
      );
      const joined = lines(await t.tmux("capture-pane", "-p", "-J", "-t", id));
      const raw = lines(await t.tmux("capture-pane", "-p", "-N", "-t", id));
      const made: (string[] | null)[] = [];
      const told: string[][] = [];
      for (let y = 0; y < raw.length; y++) {
        made.push(rowsFrom(joined, raw, y));
        told.push(lines(await t.tmux("capture-pane", "-p", "-J", "-t", id, "-S", `${y}`)));
      }
      return { made, told };
    };
    // Wrapped lines, of wide characters too: every row as tmux tells it.
    const wrapped = await narrow(
      String
        .raw`printf '$ one\n%s\nshort\n日本語日本語日本語\nend> ' abcdefghijklmnopqrstuvwxyz0123456789`,
    );
    assert.deepEqual(wrapped.made, wrapped.told);
    // A wrapped line whose last row was erased after it wrapped (a progress line cleared with
    // \r and ESC [K): what is told is what tmux tells.
    const erased = await narrow(
      String.raw`printf '$ one\n%s\r\033[K\nlast\nend> ' ABCDEFGHIJKLMNOPQRSTUVWXYZ`,
    );
    erased.made.forEach((rows, y) => rows === null || assert.deepEqual(rows, erased.told[y]));
  });
});
