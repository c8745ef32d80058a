/**
 * What the reading tools say a pane shows is what a person looking at it sees: text printed
 * hidden (SGR 8), in its background's colour (explicitly, or by the pane's own colours: OSC 10
 * and 11, a pane style), reads as blanks; text in the line-drawing set reads as its glyphs. A
 * program must not plant `All 112 tests passed` for the model alone, where the person watching
 * sees an empty row. With `escapes: true` the attributes are there to be read, as tmux prints
 * them.
 */

import assert from "node:assert/strict";
import { withTmux } from "./helpers/mcp.ts";
import { subscribed, type, type Wait, withServer } from "./helpers/wait_text.ts";
import { waitFor } from "./helpers/tmux.ts";

/** Bytes a program prints: what a person sees of each line is said beside it. */
const PRINTED = [
  "VISIBLE-1 \x1b[8mSECRET-A\x1b[28m end", // VISIBLE-1 ...blanks... end
  "\x1b[30;40mSECRET-B\x1b[0m seen-b", // blanks, then seen-b
  "\x1b[38;5;196;48;2;255;0;0mSECRET-R\x1b[0m seen-r", // red on the same red
  "\x1b(0approve\x1b(B done", // ▒⎻⎻⎼⎺┴␊ done
  "\x1b[1;31;41mBOLD-RED\x1b[0m b", // bold red on red: blank where bold is drawn as it is (VTE)
  "\x1b[2;38;5;237;48;5;16mDIM-GREY\x1b[0m d", // dim #3a3a3a on black: too faint to read
  "\x1b[97;41mOWN-COLOURS\x1b[0m", // bright white on red: seen whatever the pane's style
  "VISIBLE-END",
].join("\r\n");

const SEEN = [
  `VISIBLE-1 ${" ".repeat(8)} end`,
  `${" ".repeat(8)} seen-b`,
  `${" ".repeat(8)} seen-r`,
  "▒⎻⎻⎼⎺┴␊ done",
  `${" ".repeat(8)} b`,
  `${" ".repeat(8)} d`,
  "OWN-COLOURS",
  "VISIBLE-END",
];

Deno.test("reading tools read a pane as a person sees it: hidden and same-colour text blank, line drawing as glyphs", async () => {
  await withTmux(async (t, c) => {
    const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-shown-" });
    try {
      await Deno.writeTextFile(`${dir}/printed`, PRINTED);
      // The pane's own colours the same: everything it prints in them is unseen.
      await Deno.writeTextFile(
        `${dir}/dark`,
        "\x1b]10;#101010\x07\x1b]11;#101010\x07SECRET-C in the dark\r\n",
      );
      const pane = (await t.tmux(
        ...["new-window", "-d", "-P", "-F", "#{pane_id}"],
        `cat '${dir}/printed'; exec sleep 600`,
      )).trim();
      const dark = (await t.tmux(
        ...["new-window", "-d", "-P", "-F", "#{pane_id}"],
        `cat '${dir}/dark'; exec sleep 600`,
      )).trim();
      for (const [id, text] of [[pane, "VISIBLE-END"], [dark, "SECRET-C"]]) {
        await waitFor(
          async () => (await t.tmux("capture-pane", "-p", "-t", id)).includes(text),
          `${id} printed`,
        );
      }

      const captured = await c.ok<{ text: string }>("capture_pane", { paneId: pane });
      assert.deepEqual(captured.text.split("\n").slice(0, SEEN.length), SEEN);
      const snapshot = await c.ok<{ text: string }>("snapshot_pane", { paneId: pane });
      assert.deepEqual(snapshot.text.split("\n").slice(0, SEEN.length), SEEN);
      const joined = await c.ok<{ text: string }>("capture_pane", {
        paneId: pane,
        joinWrapped: true,
        maxLines: 100,
      });
      assert.doesNotMatch(joined.text, /SECRET|approve/);
      const since = await c.ok<{ text: string }>("capture_since", { paneId: pane });
      assert.doesNotMatch(since.text, /SECRET|approve/);
      assert.match(since.text, /▒⎻⎻⎼⎺┴␊ done/);
      // Asked for, the escapes say it all, as tmux prints them.
      const escaped = await c.ok<{ text: string }>("capture_pane", { paneId: pane, escapes: true });
      assert.ok(escaped.text.includes("\x1b[8mSECRET-A"), escaped.text);

      const search = (pattern: string) =>
        c.ok<{ totalMatches: number }>("search_panes", { pattern });
      assert.equal((await search("SECRET")).totalMatches, 0);
      assert.equal((await search("approve")).totalMatches, 0);
      assert.equal((await search("seen-b")).totalMatches, 1);
      assert.equal((await search("⎻⎻⎼")).totalMatches, 1);

      const inTheDark = await c.ok<{ text: string }>("capture_pane", { paneId: dark });
      assert.equal(inTheDark.text.trim(), "");
      // A pane style of one colour hides what the pane printed in its defaults just the same.
      await t.tmux("select-pane", "-t", pane, "-P", "fg=colour52,bg=#5f0000");
      const styled = await c.ok<{ text: string }>("capture_pane", { paneId: pane });
      assert.doesNotMatch(styled.text, /VISIBLE|seen|done/);
      assert.match(styled.text, /OWN-COLOURS/);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

/**
 * Text a person cannot read though it is neither hidden nor in its background's very colour
 * (each row as tmux gives it to a person's 256-colour terminal: 233 on 234, #121212 on
 * #1c1c1c; bright white on white; black on black), and hidden characters of the widths a rough
 * table got wrong: U+0600 takes a column (the words either side stay apart), ⌚ two.
 */
const FAINT = [
  "L1 \x1b[38;2;16;16;16;48;2;26;26;26mSECRET-NEAR\x1b[0m",
  "L2 \x1b[97;48;2;255;255;255mSECRET-WHITE\x1b[0m",
  "L3 \x1b[30;48;5;16mSECRET-BLACK\x1b[0m",
  "L4 \x1b[38;5;16;48;5;233mSECRET-233\x1b[0m",
  "L5 \x1b[38;2;68;68;68;48;2;0;0;0mdim-but-read\x1b[0m",
  "All 112 tests pass\x1b[8m\u0600\x1b[28med",
  "ab\x1b[8m\u231a\x1b[28mcd",
  "FAINT-END",
].join("\r\n");

const FAINT_SEEN = [
  "L1",
  "L2",
  "L3",
  "L4",
  "L5 dim-but-read",
  "All 112 tests pass ed",
  "ab  cd",
  "FAINT-END",
];

Deno.test("reading tools: text too faint to read is blank, a hidden character as wide as tmux draws it", async () => {
  await withTmux(async (t, c) => {
    const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-shown-" });
    try {
      await Deno.writeTextFile(`${dir}/faint`, FAINT);
      const pane = (await t.tmux(
        ...["new-window", "-d", "-P", "-F", "#{pane_id}"],
        `cat '${dir}/faint'; exec sleep 600`,
      )).trim();
      await waitFor(
        async () => (await t.tmux("capture-pane", "-p", "-t", pane)).includes("FAINT-END"),
        "the rows printed",
      );
      const captured = await c.ok<{ text: string }>("capture_pane", { paneId: pane });
      assert.deepEqual(captured.text.split("\n").slice(0, FAINT_SEEN.length), FAINT_SEEN);
      const snapshot = await c.ok<{ text: string }>("snapshot_pane", { paneId: pane });
      assert.deepEqual(snapshot.text.split("\n").slice(0, FAINT_SEEN.length), FAINT_SEEN);
      const since = await c.ok<{ text: string }>("capture_since", { paneId: pane });
      assert.doesNotMatch(since.text, /SECRET|passed/);
      // search_panes finds what capture_pane shows, and nothing else.
      const found = async (pattern: string) =>
        (await c.ok<{ totalMatches: number }>("search_panes", { pattern })).totalMatches;
      for (const pattern of ["SECRET", "passed", "tests passed", "ab cd"]) {
        assert.equal(await found(pattern), 0, pattern);
      }
      for (const pattern of ["tests pass ed", "ab  cd", "dim-but-read"]) {
        assert.equal(await found(pattern), 1, pattern);
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("wait_for_text does not match what a pane printed hidden", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const { cursor } = await c.ok<{ cursor: string }>("capture_since", { paneId: p });
    // The typed line shows the words apart; the hidden line is never seen, the next one is.
    const printed = "printf '\\033[8mDEP%sLOY OK one\\033[28m\\nDEP%sLOY OK two\\n' '' ''";
    await type(t, p, printed);
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes("DEPLOY OK two"),
      "the lines printed",
    );
    const since = await c.ok<Wait>("wait_for_text", {
      paneId: p,
      patterns: ["DEPLOY OK"],
      since: cursor,
      timeoutMs: 10_000,
    });
    assert.equal(since.outcome, "matched", JSON.stringify(since));
    assert.deepEqual(since.lines, ["DEPLOY OK two"]);
    // Over the stream too: the same output after the call.
    const waiting = c.ok<Wait>("wait_for_text", {
      paneId: p,
      patterns: ["DEPLOY OK"],
      timeoutMs: 10_000,
    });
    await subscribed(t, c);
    await type(t, p, printed);
    const streamed = await waiting;
    assert.equal(streamed.outcome, "matched", JSON.stringify(streamed));
    assert.deepEqual(streamed.lines, ["DEPLOY OK two"]);
  });
});

Deno.test("run_command: output as a person sees it, and a terminal left hiding text or drawing lines hides no end", async () => {
  await withTmux(async (t, c) => {
    const p = t.ids.paneId;
    type Run = { exitStatus: number | null; output: string; timedOut: boolean };
    const run = (command: string) =>
      c.ok<Run>("run_command", { paneId: p, command, timeoutMs: 20_000 });
    const hidden = await run(
      "printf 'shown \\033[8mSECRET\\033[28m end\\n\\033[30;40mDARK\\033[0m \\033(0lqk\\033(B\\n'",
    );
    assert.deepEqual([hidden.exitStatus, hidden.output], [0, "shown        end\n     ┌─┐"]);
    // Left on by the command: its end (and the prompt) are hidden from the person, or drawn in
    // lines, and still read; what it printed after, hidden, is not output a person saw.
    const left = await run("printf 'before\\033[8mAFTER\\n'; false");
    // (As blanks a program wrote, kept at the end of its line, as joined rows keep them.)
    assert.deepEqual([left.exitStatus, left.output], [1, "before     "]);
    // The end marker put the terminal back as it starts: the next command's output shows.
    const still = await run("echo next");
    assert.deepEqual([still.exitStatus, still.output], [0, "next"]);
    const drawing = await run("printf 'lines\\033(0'; (exit 3)");
    assert.deepEqual([drawing.exitStatus, drawing.output], [3, "lines"]);
    const back = await run("echo back");
    assert.deepEqual([back.exitStatus, back.output], [0, "back"]);
    // The pane's own colours one: what it prints in them is unseen, its end is still read.
    await t.tmux("select-pane", "-t", p, "-P", "fg=colour52,bg=#5f0000");
    const dark = await run("echo in-the-dark; printf '\\033[1;31mSEEN\\033[0m\\n'; (exit 2)");
    assert.deepEqual([dark.exitStatus, dark.output], [2, `${" ".repeat(11)}\nSEEN`]);
  });
});

Deno.test("capture_pane and tmux://pane say when a mode covers the pane: a person sees that, not the rows", async () => {
  await withTmux(async (t, c) => {
    const p = t.ids.paneId;
    await t.tmux("send-keys", "-t", p, "-l", "seq 1 60");
    await t.tmux("send-keys", "-t", p, "Enter");
    await waitFor(async () => (await t.tmux("capture-pane", "-p", "-t", p)).includes("60"), "60");
    const summary = async () => {
      const r = await c.call("capture_pane", { paneId: p });
      return r.content?.[0]?.type === "text" ? r.content[0].text.split("\n")[0] : "";
    };
    const header = async () => {
      const read = await c.client.readResource({ uri: `tmux://pane/${p.slice(1)}` });
      const [first] = read.contents as { text: string }[];
      return first.text.split("\n")[0];
    };
    assert.doesNotMatch(await summary(), /covers/);
    assert.match(await header(), /^\[pane %\d+: \d+ rows, none left out\]$/);
    await t.tmux("copy-mode", "-t", p);
    await t.tmux("send-keys", "-t", p, "-X", "scroll-up");
    await t.tmux("send-keys", "-t", p, "-X", "scroll-up");
    const scrolled = `copy-mode covers ${p} (scrolled back 2 lines): a person looking at it sees ` +
      "the pane as it stood when the mode began, not these rows";
    assert.ok((await summary()).endsWith(` ${scrolled}.`), await summary());
    assert.ok((await header()).endsWith(`; ${scrolled}]`), await header());
    // A view-mode over it (what a command run by tmux printed).
    await t.tmux("send-keys", "-t", p, "-X", "cancel");
    await t.tmux("run-shell", "-t", p, "echo shown-over-the-pane");
    await waitFor(
      async () =>
        (await t.tmux("display-message", "-p", "-t", p, "#{pane_mode}")) === "view-mode\n",
      "the view-mode",
    );
    assert.match(await summary(), /view-mode covers %\d+ \(a command's output or a list shown/);
  });
});

Deno.test("search_panes: what only the rows as shown match is found, and a long line is counted once", async () => {
  await withTmux(async (t, c) => {
    const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-shown-" });
    try {
      await Deno.writeTextFile(
        `${dir}/printed`,
        "\x1b(0{{{\x1b(B\r\n\x1b[8mX\x1b[0mpassed\r\ndone \x1b[8mZZ\x1b[0m\r\na\x1b[8mQ\x1b[0mb\r\n" +
          "\x1b(0qqqq\x1b(B\r\nEND\r\n",
      );
      const pane = (await t.tmux(
        ...["new-window", "-d", "-P", "-F", "#{pane_id}"],
        `cat '${dir}/printed'; exec sleep 600`,
      )).trim();
      await waitFor(
        async () => (await t.tmux("capture-pane", "-p", "-t", pane)).includes("END"),
        "the rows printed",
      );
      const found = async (pattern: string, regex: boolean) =>
        (await c.ok<{ totalMatches: number }>("search_panes", { pattern, regex })).totalMatches;
      for (const pattern of ["Π", "ϖ", "────"]) {
        assert.equal(await found(pattern, false), 1, pattern);
      }
      for (const pattern of ["\\bpassed", "done$", "a[\\t-!]b", "a[[:blank:]]b", "[Ā-￿]{4}"]) {
        assert.equal(await found(pattern, true), 1, pattern);
      }
      // Found as printed and again as shown: its long line counted once.
      await Deno.writeTextFile(`${dir}/long`, `abbc\r\n${"x".repeat(150_000)}\r\nLONG-END\r\n`);
      const long = (await t.tmux(
        ...["new-window", "-d", "-P", "-F", "#{pane_id}"],
        `cat '${dir}/long'; exec sleep 600`,
      )).trim();
      await waitFor(
        async () => (await t.tmux("capture-pane", "-p", "-t", long)).includes("LONG-END"),
        "the long line printed",
      );
      const r = await c.call("search_panes", {
        pattern: "ab+c",
        regex: true,
        scrollbackLines: 5000,
      });
      const text = r.content?.[0]?.type === "text" ? r.content[0].text : "";
      assert.match(text, /1 long line was matched in pieces/);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("run_command in a pane that dies: its last row cut where tmux's line begins, as shown", async () => {
  await withTmux(async (t, c) => {
    for (
      const [printed, seen] of [
        ["\\033[8m全全全全\\033[28mDONE-VISIBLE", `${" ".repeat(8)}DONE-VISIBLE`],
        ["\\033[8m\\360\\235\\220\\200\\360\\235\\220\\200\\033[28mDONE", "  DONE"],
      ]
    ) {
      const { paneId } = await t.shellWindow();
      await t.tmux("set-option", "-p", "-t", paneId, "remain-on-exit", "on");
      const r = await c.ok<{ exitStatus: number | null; output: string }>("run_command", {
        paneId,
        command: `seq 3; printf '${printed}'; exit 7`,
        timeoutMs: 20_000,
      });
      assert.deepEqual([r.exitStatus, r.output], [7, `1\n2\n3\n${seen}`]);
    }
  });
});

Deno.test("capture_since: text shown in place by its colours alone reads as a change; hidden text that stays reads as none", async () => {
  await withTmux(async (t, c) => {
    const pane = (await t.tmux(
      ...["new-window", "-d", "-P", "-F", "#{pane_id}"],
      "printf 'top\\n\\033[8mSECRET\\033[0m\\nbottom\\n'; read x; " +
        "printf '\\033[3A\\rSECRET\\n\\n\\n'; exec sleep 600",
    )).trim();
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", pane)).includes("bottom"),
      "printed",
    );
    const first = await c.ok<{ cursor: string; text: string }>("capture_since", { paneId: pane });
    assert.doesNotMatch(first.text, /SECRET/);
    // Nothing changed: a row that reads otherwise as shown than as printed stays the same row.
    const again = await c.ok<{ cursor: string; text: string }>("capture_since", {
      paneId: pane,
      cursor: first.cursor,
    });
    assert.equal(again.text, "");
    await t.tmux("send-keys", "-t", pane, "Enter");
    await waitFor(
      async () => !(await t.tmux("capture-pane", "-p", "-e", "-t", pane)).includes("\x1b[8m"),
      "shown in place",
    );
    const shown = await c.ok<{ text: string }>("capture_since", {
      paneId: pane,
      cursor: again.cursor,
    });
    assert.match(shown.text, /SECRET/);
    // From the row that changed on (the rows after it come along, said unchanged).
    assert.match(shown.text, /^SECRET\n/);
    assert.doesNotMatch(shown.text, /top/);
  });
});
