import assert from "node:assert/strict";
import { TerminalText } from "./terminal_text.ts";
import { caseBytes, TMUX_CASES } from "../../tests/helpers/tmux_parser_cases.ts";

const bytes = (s: string) => new TextEncoder().encode(s);

Deno.test("TerminalText strips escapes and rebuilds lines across arbitrary chunks", () => {
  const t = new TerminalText();
  const stream =
    "\x1b[32mDO\x1b[0mNE\r\n\x1b]0;title\x07pro 50%\rpro 90%\r\n日本🙂 tab\tx\x1b(Bok\n" +
    "\x1bP1$r\x1b\\after";
  const all = bytes(stream);
  const lines: string[] = [];
  // One byte at a time: every escape, CR LF and UTF-8 sequence is split somewhere.
  for (let i = 0; i < all.length; i++) lines.push(...t.push(all.subarray(i, i + 1)));
  assert.deepEqual(lines, ["DONE", "pro 50%", "pro 90%", "日本🙂 tab\txok"]);
  assert.equal(t.partial, "after");
  assert.deepEqual(t.recent().slice(-2), ["日本🙂 tab\txok", "after"]);
});

/** Pieces of terminal output: text, UTF-8, escapes, line ends, bytes that are not UTF-8. */
const PIECES = [
  "y",
  "hello world",
  "日本🙂",
  "\t",
  "\r\n",
  "\n",
  "\r",
  "\x1b[1;31m",
  "\x1b]0;a title\x07",
  "\x1bP1$r\x1b\\",
  "\x1b(B",
  "\x07\x08",
  "\xff\xfe",
  "x".repeat(20_000),
];

/** A stream of `count` pieces picked by a seeded generator, as bytes (\xNN as that byte). */
function stream(seed: number, count: number): Uint8Array {
  let s = seed;
  const out: number[] = [];
  const utf8 = new TextEncoder();
  for (let i = 0; i < count; i++) {
    s = (Math.imul(s, 1_103_515_245) + 12_345) >>> 0;
    const piece = PIECES[(s >>> 8) % PIECES.length];
    // Long lines only now and then, so that the stream holds many lines too.
    if (piece.length > 1_000 && (s >>> 4) % 8 !== 0) continue;
    const raw = /^[\xfe\xff]+$/.test(piece);
    for (const b of raw ? [...piece].map((c) => c.charCodeAt(0)) : utf8.encode(piece)) {
      out.push(b);
    }
  }
  return Uint8Array.from(out);
}

/** `bytes` in chunks of seeded sizes (1 to 5 000 bytes), as `%output` delivers them. */
function* chunks(bytes: Uint8Array, seed: number): Generator<Uint8Array> {
  let s = seed;
  for (let i = 0; i < bytes.length;) {
    s = (Math.imul(s, 1_103_515_245) + 12_345) >>> 0;
    const size = 1 + (s >>> 8) % ((s >>> 4) % 2 === 0 ? 8 : 5_000);
    yield bytes.subarray(i, i + size);
    i += size;
  }
}

Deno.test("TerminalText: lines, the partial line and the recent lines do not depend on how the output is cut", () => {
  for (let seed = 1; seed <= 20; seed++) {
    const all = stream(seed, 2_000);
    const whole = new TerminalText(50);
    const lines = whole.push(all);
    const cut = new TerminalText(50);
    const pieces: string[] = [];
    for (const chunk of chunks(all, seed)) pieces.push(...cut.push(chunk));
    assert.deepEqual(pieces, lines, `seed ${seed}`);
    assert.equal(cut.partial, whole.partial);
    // The last 50 lines.
    assert.deepEqual(
      cut.recent(),
      whole.partial === "" ? lines.slice(-50) : [...lines.slice(-50), whole.partial],
    );
  }
});

Deno.test("TerminalText: fed without taking lines, it keeps the same recent lines and partial line as when they are taken", () => {
  for (let seed = 1; seed <= 20; seed++) {
    const all = stream(seed, 2_000);
    const taken = new TerminalText(30);
    const fed = new TerminalText(30);
    for (const chunk of chunks(all, seed)) {
      taken.push(chunk);
      // A feed gives back nothing to decode.
      assert.equal(fed.feed(chunk), undefined);
      assert.equal(fed.partial, taken.partial);
    }
    assert.deepEqual(fed.recent(), taken.recent(), `seed ${seed}`);
    assert.equal(fed.takeWritten(), taken.takeWritten());
  }
});

Deno.test("TerminalText keeps only its last lines, however many come, and none when asked to keep none", () => {
  const t = new TerminalText(3);
  const none = new TerminalText(0);
  const lines = Array.from({ length: 100_000 }, (_, i) => `line ${i}`);
  const all = bytes(`${lines.join("\r\n")}\r\nnow`);
  t.feed(all);
  none.feed(all);
  assert.deepEqual(t.recent(), ["line 99997", "line 99998", "line 99999", "now"]);
  assert.deepEqual(none.recent(), ["now"]);
  // A line longer than the decoder builds is cut into lines of its longest, kept whole.
  t.feed(bytes(`\r\n${"é".repeat(10_000)}\r\n`));
  const long = t.recent();
  assert.deepEqual(long.map((l) => l.length), [3, 8_192, 1_808]);
});

/** What the decoder makes of `all`, as rows: its lines and its partial line, blank ones dropped. */
function decoded(all: Uint8Array, cut: number): string[] {
  const t = new TerminalText();
  const lines: string[] = [];
  for (let i = 0; i < all.length; i += cut) lines.push(...t.push(all.subarray(i, i + cut)));
  return [...lines, t.partial].filter((l) => l !== "");
}

Deno.test("TerminalText prints what tmux prints: sequences cancelled, ended and left open as tmux's parser has them", () => {
  for (const { bytes: text, shown } of TMUX_CASES) {
    const all = caseBytes(text);
    // Whole, and a byte at a time (every sequence split).
    for (const cut of [all.length, 1]) {
      assert.deepEqual(decoded(all, cut), shown, `${JSON.stringify(text.slice(0, 40))} cut ${cut}`);
    }
  }
  // The tester's case: the text after a title cancelled by CAN is a line of its own.
  assert.deepEqual(new TerminalText().push(bytes("\x1b]0;t\x18SHOWN\x07\n")), ["SHOWN"]);
});

Deno.test("TerminalText ends a string left open as long as tmux waits for its end, and no sooner", () => {
  // What came before the string's 5 s were up stays hidden; what comes after is printed.
  for (const [later, shown] of [[4_999, "AB"], [5_000, "AOWNB"]] as const) {
    for (const start of ["\x1b]0;title", "\x1bPq", "\x1b_apc", "\x1bkti"]) {
      const t = new TerminalText();
      t.push(bytes(`A${start}`), 1_000);
      t.push(bytes("SH"), 1_000 + later - 1);
      t.push(bytes("OWN\x07\x1b\\B"), 1_000 + later);
      assert.equal(t.partial, shown, `${JSON.stringify(start)} after ${later} ms`);
    }
  }
  // A CSI has no such wait: its final byte ends it however late.
  const csi = new TerminalText();
  csi.push(bytes("A\x1b[1;2"), 0);
  csi.push(bytes("SHOWN"), 60_000);
  assert.equal(csi.partial, "AHOWN");
  // Without a time, a string ends only as its bytes say.
  const t = new TerminalText();
  t.push(bytes("A\x1b]0;title"));
  t.push(bytes("HIDDEN\x07B"));
  assert.equal(t.partial, "AB");
});

Deno.test("TerminalText tells an erase made with a background colour set, which no capture shows", () => {
  const painted = (s: string) => {
    const t = new TerminalText();
    t.feed(bytes(s));
    return t.takePainted();
  };
  // Cells cleared (ECH, EL, ED, insert and delete, scrolls) in green: the screen changed.
  for (const erase of ["5X", "K", "2J", "3@", "2P", "L", "M", "S", "T"]) {
    assert.equal(painted(`\x1b[42m\x1b[${erase}\x1b[0m`), true, erase);
  }
  // 256 colours, direct colour, bright, colon sub-parameters: set too.
  for (const sgr of ["48;5;22", "48;2;0;128;0", "102", "1;48:5:22"]) {
    assert.equal(painted(`\x1b[${sgr}m\x1b[3X`), true, sgr);
  }
  // The default background, or one set and then reset (0, 49, an empty SGR, RIS): nothing.
  for (
    const s of ["\x1b[K", "\x1b[42m\x1b[0m\x1b[K", "\x1b[42m\x1b[49m\x1b[K", "\x1b[42m\x1b[m\x1b[K"]
  ) {
    assert.equal(painted(s), false, JSON.stringify(s));
  }
  assert.equal(painted("\x1b[42m\x1bc\x1b[K"), false);
  // Saved with DECSC, reset, restored with DECRC: set again. The text after them is text.
  const t0 = new TerminalText();
  assert.deepEqual(t0.push(bytes("\x1b[42m\x1b7\x1b[0m\x1b8A\x1b[K\x1bcB\r\n")), ["AB"]);
  assert.equal(t0.takePainted(), true);
  // CSI s and u, and the alternate screen's 1049, save and give back the background as tmux
  // does: a colour set between them is gone after, and a pane cannot fake a change so.
  assert.equal(painted("\x1b[s\x1b[44m\x1b[u\x1b[K"), false);
  assert.equal(painted("\x1b[?1049h\x1b[44m\x1b[?1049l\x1b[K"), false);
  assert.equal(painted("\x1b[44m\x1b[s\x1b[0m\x1b[u\x1b[K"), true);
  // A foreground colour whose index reads 48, and a private sequence ending in `m` (xterm's
  // modifyOtherKeys), set no background.
  assert.equal(painted("\x1b[38;5;48m\x1b[K"), false);
  assert.equal(painted("\x1b[>4;2m\x1b[K"), false);
  // Told once: taken, it is clear until the next erase; the colour stays set across chunks.
  const t = new TerminalText();
  t.feed(bytes("\x1b[4"));
  t.feed(bytes("2m\x1b["));
  t.feed(bytes("X"));
  assert.equal(t.takePainted(), true);
  assert.equal(t.takePainted(), false);
  t.feed(bytes("\x1b[K"));
  assert.equal(t.takePainted(), true);
});

Deno.test("TerminalText writes what a person does not see as blanks, line drawing as glyphs", () => {
  const t = new TerminalText();
  const stream = "ok \x1b[8mAll 112 tests passed\x1b[28m!\r\n" +
    "\x1b[31;41mred\x1b[0m|\x1b[38;5;196;48;2;255;0;0mrgb\x1b[49m|\x1b[1;31;41mbold\x1b[m\r\n" +
    "\x1b(0lqk\x1b(B \x1b)0\x0eyes\x0f no\r\n" +
    // Saved with the cursor and given back; RIS resets it all.
    "\x1b[8m\x1b7\x1b[0mseen\x1b8gone\x1bc back\x1b(0\x1bcq\r\n" +
    // Hidden through CSI s / u and an escape split by C0 controls carried out in it.
    "\x1b[8m\x1b[s\x1b[m\x1b[uhid\x1b[28m\x1b(\x0e0x\x0fx\r\n" +
    // A hidden character leaves the columns it takes: two for a wide one, none for a mark.
    "<\x1b[8m漢😀e\u0301\x1b[28m>\r\n";
  const lines: string[] = [];
  for (const piece of bytes(stream)) lines.push(...t.push(Uint8Array.of(piece)));
  assert.deepEqual(lines, [
    "ok                     !",
    "   |   |    ",
    "┌─┐ ≤␊⎽ no",
    "seen     backq",
    "   x│",
    "<     >",
  ]);
});

Deno.test("TerminalText: a string tmux gives up on after 5 s resets the attributes, as tmux's parser does", () => {
  const t = new TerminalText();
  t.push(bytes("A\x1b[31;41m\x1b(0\x1b]0;open"), 0);
  assert.deepEqual(t.push(bytes("RED q\r\n"), 6_000), ["ARED q"]);
});

Deno.test("TerminalText: text too faint to read is blanks, and a hidden character leaves the columns tmux gives it", () => {
  const t = new TerminalText();
  const stream = "L1 \x1b[38;2;16;16;16;48;2;26;26;26mSECRET\x1b[0m|\r\n" +
    "L2 \x1b[97;48;2;255;255;255mSECRET\x1b[0m|\x1b[30;48;5;16mSECRET\x1b[0m|\r\n" +
    "L3 \x1b[38;5;16;48;5;233mSECRET\x1b[0m|\x1b[38;2;68;68;68;48;2;0;0;0mdim\x1b[0m\r\n" +
    "All 112 tests pass\x1b[8m\u0600\x1b[28med\r\n" +
    "ab" +
    ["\u231a", "\u{1f680}", "\u{1f321}", "\u1160"].map((c) => `\x1b[8m${c}\x1b[28m`).join("|") +
    "cd\r\n";
  const lines: string[] = [];
  for (const piece of bytes(stream)) lines.push(...t.push(Uint8Array.of(piece)));
  assert.deepEqual(lines, [
    "L1       |",
    "L2       |      |",
    "L3       |dim",
    "All 112 tests pass ed",
    "ab  |  | |cd",
  ]);
});
