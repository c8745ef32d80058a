import assert from "node:assert/strict";
import { BARE, BARE_FIELD, BARE_NAME, json, scalar } from "./render_value.ts";

/** Format characters and default-ignorable ones: what shows as nothing, or changes others. */
const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/u;

/** Every code point that is a format or default-ignorable character (planes 0, 1 and 14). */
function invisibles(): string[] {
  const out: string[] = [];
  for (const [from, to] of [[0, 0x1ffff], [0xe0000, 0xe0fff]]) {
    for (let cp = from; cp <= to; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCodePoint(cp);
      if (INVISIBLE.test(c)) out.push(c);
    }
  }
  return out;
}

const hex = (c: string) => c.codePointAt(0)!.toString(16);

Deno.test("an invisible character anywhere keeps a value from being bare, and is escaped in it", () => {
  const all = invisibles();
  assert.ok(all.length > 4_000, `${all.length} found`); // tags, variation selectors, ...
  for (const c of all) {
    for (const value of [`solo${c}`, `${c}solo`, `so${c}lo`]) {
      for (const pattern of [BARE, BARE_FIELD, BARE_NAME]) {
        assert.match(scalar(value, pattern), /^"/, `U+${hex(c)} in ${pattern}`);
      }
      const written = json(value);
      assert.doesNotMatch(written, INVISIBLE, `U+${hex(c)} escaped: ${written}`);
      assert.equal(JSON.parse(written), value, `U+${hex(c)} reads back`);
    }
  }
  assert.equal(json("solo\u200b"), String.raw`"solo\u200b"`);
  assert.equal(json("a\u{e0041}"), String.raw`"a\udb40\udc41"`, "past U+FFFF: both halves");
  assert.equal(json(["x\u2060", { k: "\u{e0101}" }]), String.raw`["x\u2060",{"k":"\udb40\udd01"}]`);
});

Deno.test("an emoji's joiner and presentation selector stay as they are, inside a JSON string", () => {
  for (
    const emoji of [
      "👩‍💻", // woman, ZWJ, laptop
      "❤️", // heart, VS16
      "❤️‍🔥", // heart, VS16, ZWJ, fire
      "🏳️‍🌈", // flag, VS16, ZWJ, rainbow
      "🧑🏽‍💻", // a skin tone before the joiner
      "1️⃣", // keycap: digit, VS16, combining keycap
      "👨‍👩‍👧‍👦",
    ]
  ) {
    const value = `${emoji} build`;
    assert.equal(json(value), JSON.stringify(value), emoji);
    assert.equal(scalar(value, BARE), JSON.stringify(value), "quoted, not bare");
  }
  assert.equal(scalar("🚀", BARE), "🚀", "an emoji with neither stays bare on its own line");
  // Anywhere else they join or select nothing: escaped, as a lone one or a run carries data.
  const lone: [string, string][] = [
    ["solo\u200d", String.raw`"solo\u200d"`],
    ["\u200d👩", String.raw`"\u200d👩"`],
    ["👩\u200d", String.raw`"👩\u200d"`],
    ["👩\u200d\u200d💻", String.raw`"👩\u200d\u200d💻"`],
    ["a\u200db", String.raw`"a\u200db"`],
    ["x\ufe0f", String.raw`"x\ufe0f"`],
    ["❤\ufe0f\ufe0f", String.raw`"❤️\ufe0f"`],
    ["❤\ufe0f\ufe0e", String.raw`"❤️\ufe0e"`],
    ["😀\ufe01", String.raw`"😀\ufe01"`],
    ["😀\u{e0100}\u{e0101}", String.raw`"😀\udb40\udd00\udb40\udd01"`],
    // Not spelling an emoji of the recommended set: a joiner between two that form none, a
    // selector after a digit or `#` (a keycap needs U+20E3), text presentation of a smiley.
    ["🚀\u200d🚀", String.raw`"🚀\u200d🚀"`],
    ["build1\ufe0f", String.raw`"build1\ufe0f"`],
    ["run#\ufe0e", String.raw`"run#\ufe0e"`],
    ["☺\ufe0e", String.raw`"☺\ufe0e"`],
    // A subdivision flag's tag characters spell text a reader does not see: escaped too.
    ["🏴\u{e0067}\u{e0062}\u{e007f}", String.raw`"🏴\udb40\udc67\udb40\udc62\udb40\udc7f"`],
  ];
  for (const [value, written] of lone) {
    assert.equal(json(value), written);
    assert.equal(JSON.parse(written), value);
  }
});

Deno.test("a lookalike of a separator keeps an entry's field or a placement's name from being bare", () => {
  // `=` and the blank between fields, in an entry line; `(),:*$` too, in a placement.
  const field = [
    "\ua78a",
    "\uff1d",
    "\u2e40",
    "\u30a0",
    "\ufe66",
    "\u207c",
    "\u208c",
    "\u1400",
    "\ua4ff",
    "\u{1f7f0}",
    "\u2800",
  ];
  for (const c of field) {
    for (const pattern of [BARE_FIELD, BARE_NAME]) {
      assert.equal(scalar(`vm${c}true`, pattern), `"vm${c}true"`, `U+${hex(c)}`);
    }
    assert.equal(scalar(`vm${c}true`, BARE), `vm${c}true`, "a line's own value may hold it");
  }
  for (const c of "（）：，＊＄﹙﹚﹕﹐﹑﹡﹩∶꞉︓、‚։׃⁚ꓽːꓹ،❨❩⁽⁾₍₎﴾﴿〔〕❲❳═") {
    assert.equal(scalar(`x${c}y`, BARE_NAME), `"x${c}y"`, `U+${hex(c)}`);
    assert.equal(scalar(`x${c}y`, BARE_FIELD), `"x${c}y"`, `U+${hex(c)}`);
  }
  // A placement forged from lookalikes: `build($1):0,ops($2):0` to the eye.
  const forged = "build❨💲1❩ː0ꓹops";
  assert.equal(scalar(forged, BARE_NAME), JSON.stringify(forged));
});

Deno.test("ordinary text stays bare", () => {
  for (const value of ["café", "日本語", "한국어", "naïve-1", "ملف", "हिन्दी", "Ünï_cödé.2"]) {
    for (const pattern of [BARE, BARE_FIELD, BARE_NAME]) {
      assert.equal(scalar(value, pattern), value);
    }
  }
  // A symbol is bare only on a line of its own: inside an entry, symbols hold lookalikes.
  assert.equal(scalar("🚀", BARE), "🚀");
  assert.equal(scalar("🚀", BARE_FIELD), '"🚀"');
});
