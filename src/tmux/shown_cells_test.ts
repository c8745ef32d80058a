import assert from "node:assert/strict";
import { prng, type Rand } from "../../tests/helpers/prng.ts";
import { attachRecorded, TestTmux, waitFor } from "../../tests/helpers/tmux.ts";
import { Attributes, blankWidth, paneColours, ShownCells, shownStart } from "./shown_cells.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The text a capture's bytes show, read in chunks of `size` bytes. */
function shown(text: string, trim: boolean, size = Infinity): string {
  const bytes = encoder.encode(text);
  if (size === Infinity) return decoder.decode(ShownCells.of(bytes, trim));
  const cells = new ShownCells(trim);
  const parts: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += size) {
    parts.push(cells.push(bytes.subarray(at, at + size)));
  }
  parts.push(cells.finish());
  return parts.map((p) => decoder.decode(p, { stream: true })).join("") + decoder.decode();
}

Deno.test("ShownCells: hidden and same-colour cells are blanks, escapes go, rows trimmed as tmux trims", () => {
  const capture = "ab\x1b[8msecret\x1b[0m\x1b[39m\x1b[49mcd\n" +
    "\x1b[31;41mred on red\x1b[0m x\n" +
    "\x1b[1;31;41mbold red on red\x1b[0m \x1b[2;38;5;237;48;5;16mdim\x1b[0m\n" +
    "\x1b[38;5;1;48;5;1msame\x1b[0m \x1b[38;2;1;2;3m\x1b[48;2;1;2;3mrgb\x1b[0m\n" +
    "\x1b[38:2::9:9:9m\x1b[48:2:9:9:9mcolon\x1b[0m \x1b[91;48;5;9mbright\x1b[49m!\n" +
    "\x1b[8m漢e\u0301\x1b[28m| \x1b[41m  \x1b[49m\n" +
    "\x1b[8mwrapped\nstill\x1b[0m shown\n" +
    "\x1b[38;5;8mgrey\x1b[0m \x1b[4:3mcurly\x1b[58;2;8;8;8m8\x1b[0m";
  const trimmed = [
    "ab      cd",
    "           x",
    "",
    "",
    "            !",
    "   |",
    "",
    "      shown",
    "grey curly8",
  ].join("\n");
  assert.equal(shown(capture, true), trimmed);
  for (const size of [1, 2, 3, 7]) {
    assert.equal(shown(capture, true, size), trimmed, `chunks of ${size}`);
  }
  // Untrimmed (-N, -J): every blank stays.
  const untrimmed = shown(capture, false);
  assert.equal(untrimmed.split("\n")[1], "           x");
  assert.equal(untrimmed.split("\n")[3], "        ");
  assert.equal(untrimmed.split("\n")[6], "       ");
  assert.equal(shown(capture, false, 1), untrimmed);
  // Bold in one of the first eight is drawn bright by some terminals (on its bright colour it
  // is unseen there) and as it is by others (VTE: black on black): unseen where either. True colours are told apart as they are (a terminal that takes
  // them shows these two blues), and one the same as a palette entry is that entry.
  assert.deepEqual(
    shown(
      "\x1b[1;30;100mA\x1b[0m|\x1b[1;30;40mB\x1b[0m|" +
        "\x1b[38;2;114;114;255;48;2;48;48;255mC\x1b[0m|\x1b[38;2;255;0;0;48;5;196mD\x1b[0m|" +
        "\x1b[38;2;16;16;16;48;5;233mE\x1b[0m|\x1b[38;5;300;48;5;300mF",
      true,
    ),
    " | |C| | |F",
  );
  // A capture with no escape is given back as it is, the same bytes.
  const plain = encoder.encode("plain  \nrows");
  assert.equal(ShownCells.of(plain, true), plain);
});

const WORDS = ["ab", "xyz ", "  ", "漢字", "e\u0301", "-=#", "q", "     wide  "];

/**
 * Pane output in two forms: `printed` with hidden and same-colour text among coloured text,
 * and `seen`, the same with every such character printed as the blanks a person sees.
 */
function sample(rand: Rand): { printed: string; seen: string } {
  let printed = "";
  let seen = "";
  for (let i = 0; i < 40; i++) {
    const word = rand.pick(WORDS);
    const blanks = word.replace(/e\u0301/g, "e").replace(/[漢字]/g, "  ").replace(/\S/g, " ");
    switch (rand.int(6)) {
      case 0:
        printed += `\x1b[8m${word}\x1b[28m`;
        seen += blanks;
        break;
      case 1: {
        const c = rand.int(8);
        printed += `\x1b[3${c};4${c}m${word}\x1b[0m`;
        seen += `\x1b[4${c}m${blanks}\x1b[0m`;
        break;
      }
      case 2: {
        // Bold on its own colour: some terminals draw it bright, others (VTE) as it is, unseen.
        const c = rand.int(8);
        printed += `\x1b[1;3${c};4${c}m${word}\x1b[0m`;
        seen += `\x1b[4${c}m${blanks}\x1b[0m`;
        break;
      }
      case 3:
        printed += `\x1b[3${rand.int(8)}m${word}\x1b[39m`;
        seen += word;
        break;
      case 4:
        // Hidden across a line end: a capture carries attributes from row to row.
        printed += `\x1b[8m${word}\r\n${word}\x1b[0m`;
        seen += `${blanks}\r\n${blanks}`;
        break;
      default:
        printed += `${word}\r\n`;
        seen += `${word}\r\n`;
    }
  }
  return { printed, seen };
}

Deno.test("ShownCells: a capture with -e reads as the same pane printed with blanks, for every flag", async () => {
  const t = await TestTmux.start("main", { width: 23, height: 6 });
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-shown-" });
  try {
    const rand = prng(20261207);
    for (let round = 0; round < 4; round++) {
      const { printed, seen } = sample(rand);
      const panes: string[] = [];
      for (const [name, text] of [["printed", printed], ["seen", seen]]) {
        const file = `${dir}/${round}-${name}`;
        await Deno.writeTextFile(file, `${text}\x1b[0m\r\nEND-OF-SAMPLE`);
        const pane = (await t.tmux(
          "new-window",
          "-d",
          "-P",
          "-F",
          "#{pane_id}",
          `cat '${file}'; exec sleep 600`,
        )).trim();
        await waitFor(
          async () => (await t.tmux("capture-pane", "-p", "-t", pane)).includes("END-OF-SAMPLE"),
          `${pane} printed its sample`,
        );
        panes.push(pane);
      }
      for (const flags of [[], ["-N"], ["-J"], ["-J", "-N"]]) {
        const read = (pane: string, more: string[]) =>
          t.tmux("capture-pane", "-p", ...more, ...flags, "-S", "-", "-t", pane);
        const escaped = await read(panes[0], ["-e"]);
        const expected = await read(panes[1], []);
        assert.equal(
          shown(escaped, flags.length === 0),
          expected,
          `round ${round}, flags ${flags.join(" ")}: ${JSON.stringify(printed)}`,
        );
        // Nothing hidden: the same text as tmux's plain capture.
        assert.equal(shown(await read(panes[1], ["-e"]), flags.length === 0), expected);
      }
      for (const pane of panes) await t.tmux("kill-pane", "-t", pane);
    }
  } finally {
    await t.kill();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ShownCells: the line-drawing set reads as a person's UTF-8 terminal is given it", async () => {
  const keys = "+,-.0`abcdefghijklmnopqrstuvwxyz{|}~";
  const t = await TestTmux.start("main", {
    width: 60,
    height: 5,
    command: `printf 'A\\033(0${
      keys.replace("%", "%%")
    }\\033(B Z\\n\\033)0\\016lqk\\017 ok\\n'; exec sleep 600`,
  });
  const person = await attachRecorded(t, "main", { TERM: "xterm-256color", LANG: "C.UTF-8" });
  try {
    const expected = `A${[...keys].map((k) => shown(`\x0e${k}\x0f`, true)).join("")} Z`;
    // Every key is the set's: none reads as itself.
    assert.equal([...expected].filter((c, i) => c === `A${keys} Z`[i]).length, 3);
    const capture = await t.tmux("capture-pane", "-p", "-e", "-t", t.ids.paneId);
    assert.deepEqual(shown(capture, true).split("\n").slice(0, 2), [expected, "┌─┐ ok"]);
    // What tmux wrote to the person's terminal, escape sequences dropped.
    await waitFor(async () => {
      const seen = decoder.decode(await person.received()).replace(
        // deno-lint-ignore no-control-regex
        /\x1b(?:\[[0-9;?>=]*[A-Za-z]|\([0-9A-Za-z]|[=>])/g,
        "",
      );
      return seen.includes(expected) && seen.includes("┌─┐ ok");
    }, "the person's terminal given the glyphs");
  } finally {
    await person.done();
    await t.kill();
  }
});

Deno.test("Attributes: parameters read where they are (applyBytes) read as the text reading does", () => {
  const rand = prng(42);
  const tokens = ["", "0", "1", "8", "22", "28", "31", "38", "48", "58", "5", "2", "255", "300"];
  const more = ["7", "39", "49", "91", "101", "x", "16", "12", "200", "45"];
  for (let round = 0; round < 5000; round++) {
    const params = Array.from(
      { length: 1 + rand.int(9) },
      () => rand.pick(rand.chance(0.7) ? tokens : more),
    ).join(";");
    const [text, bytes] = [new Attributes(), new Attributes()];
    // From a state of its own, so that a reset or a default is seen to apply.
    for (const a of [text, bytes]) a.apply("8;1;31;48;2;9;9;9");
    text.apply(params);
    const encoded = new TextEncoder().encode(`[${params}m`);
    bytes.applyBytes(encoded, 1, encoded.length - 1);
    const state = (a: Attributes) => JSON.stringify([a.hidden, a.bold, a.fg, a.bg, a.unseen]);
    assert.equal(state(bytes), state(text), params);
  }
});

Deno.test("shownStart: the start of a shown row spanning a printed start's columns", () => {
  assert.equal(shownStart("        DONE-VISIBLE", "全全全全DONE"), "        DONE");
  assert.equal(shownStart("  OKPane is dead", "𝐀𝐀OK"), "  OK");
  assert.equal(shownStart("┌─┐ ok", "lqk"), "┌─┐");
  assert.equal(shownStart("abc", ""), "");
  assert.equal(shownStart("ab", "abcd"), "ab");
});

Deno.test("Attributes: text too near its background's brightness to be read is unseen; dim text a person reads shows", () => {
  const unseen = (params: string, defaults?: string) => {
    const a = new Attributes(defaults === undefined ? undefined : paneColours(defaults));
    a.apply(params);
    return a.unseen;
  };
  // Each as tmux gives it to a person's 256-colour terminal, with the contrast a person gets.
  for (
    const params of [
      "38;2;16;16;16;48;2;26;26;26", // 233 on 234: #121212 on #1c1c1c, 1.10
      "38;2;16;16;16;48;2;24;24;24", // 1.08
      "2;38;5;237;48;5;16", // dim #3a3a3a on black: drawn about #1d1d1d, 1.25
      "1;31;41", // bold red on red: VTE and Alacritty draw bold as it is
      "1;30;40", // black on black, bold
      "38;5;16;48;5;233", // #000 on #121212, 1.12
      "38;5;235;48;5;233", // #262626 on #121212, 1.24
      "97;48;2;255;255;255", // bright white on white (97 on 231)
      "30;48;5;16", // black on black
      "1;30;48;2;127;127;127", // bold black, drawn bright black (#7f7f7f), on it
      "37;48;5;254", // white (#e5e5e5) on #e4e4e4
      "38;2;32;0;0;48;5;16", // a red too dark to tell from black
      "30;48;5;235", // black on #262626: 1.39 in xterm's black, 1.2-1.3 in other palettes'
    ]
  ) assert.equal(unseen(params), true, params);
  for (
    const params of [
      "38;2;68;68;68;48;2;0;0;0", // #444 on black, 2.2: dim, read
      "38;5;240;48;5;16", // #585858 on black, 2.9
      "2;97;40", // dim bright white on black: grey, read
      "2;31;40", // dim red on black, by its hue
      "2;1;22;38;5;237;48;5;16", // 22 ends dim as it ends bold
      "1;37;41", // bold white on red
      "38;2;76;86;106;48;2;46;52;64", // Nord's comments, 1.7
      "38;5;239;48;5;235", // a line number: #4e4e4e on #262626, 1.8
      "38;5;237;48;5;233", // #3a3a3a on #121212, 1.6
      "38;2;255;0;0;48;2;128;128;128", // red on grey: as bright, and read by its hue
      "38;5;46;48;5;51", // green on cyan
      "30;48;5;237", // black on #3a3a3a, 1.85
      "37;107", // white on bright white: two of the terminal's, apart in every palette
      "90;40", // bright black on black
      "38;2;0;0;0", // on the terminal's default background: its own to choose
      "38;5;16;49",
    ]
  ) assert.equal(unseen(params), false, params);
  // The pane's own colours count as the cell's.
  assert.equal(unseen("", "#121212,#1c1c1c"), true);
  assert.equal(unseen("", "colour16,black"), true);
  assert.equal(unseen("", "#444444,#000000"), false);
});

Deno.test("blankWidth: a hidden character leaves the columns tmux (3.3a, glibc's wcwidth) gives it", () => {
  const widths: [number, number][] = [
    // Prepended concatenation marks: format characters that take a column of their own.
    ...[0x600, 0x605, 0x6dd, 0x70f, 0x890, 0x891, 0x8e2, 0x110bd, 0x110cd].map((cp) =>
      [cp, 1] as [number, number]
    ),
    // Wide: East Asian wide and full-width, emoji presented as emoji.
    ...[0x231a, 0x2614, 0x26a1, 0x1f004, 0x1f680, 0x1fa70, 0x1f90c, 0x4e00, 0x20000, 0x30000]
      .map((cp) => [cp, 2] as [number, number]),
    // Emoji presented as text, one column: 🌡, ☀, ✈.
    [0x1f321, 1],
    [0x2600, 1],
    [0x2708, 1],
    // None: combining marks, the medial and final Hangul jamo, zero-width formats.
    ...[0x301, 0x1160, 0x11ff, 0xd7b0, 0x200b, 0xfe0f, 0x3099, 0x302a, 0xe0001, 0xe0100].map((
      cp,
    ) => [cp, 0] as [number, number]),
    // Private use; and one no table names, given a column rather than none.
    [0xe000, 1],
    [0x378, 1],
  ];
  for (const [cp, width] of widths) {
    assert.equal(blankWidth(cp), width, `U+${cp.toString(16).toUpperCase()}`);
  }
  // Words a hidden character stands between stay apart, by as many columns as tmux gives it.
  assert.equal(
    shown("All 112 tests pass\x1b[8m\u0600\x1b[28med\nab\x1b[8m\u231a\x1b[28mcd", true),
    "All 112 tests pass ed\nab  cd",
  );
});
