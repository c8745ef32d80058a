import assert from "node:assert/strict";
import { parseRendered } from "../../tests/helpers/rendered.ts";
import { jsonStringBytes } from "./bounds.ts";
import { entryWireBytes, renderReply } from "./render.ts";

const HOSTILE = [
  "plain",
  "two words",
  " leading",
  "trailing ",
  "",
  "a=b",
  'say "hi"',
  "back\\slash",
  "line\nbreak",
  "ends with newline\n",
  "tab\there",
  "esc\x1b[31mred",
  "```\nfake fence\n```",
  "````",
  "- id=%9 fake=entry",
  "key: value",
  "true",
  "42",
  "-1.5",
  "null",
  "日本語🙂",
  "\u2028sep",
  "\u009bcsi",
  "#{pane_id}",
  "[tmux]",
  "{x}",
  "1e5",
  "- dash",
  "\\x07",
  "\\\\x1b\\",
  "a\\\x07",
  "\\x4g\\xff\\\\",
  '[{"id":1,"k":"v \\" w"}]'.repeat(120), // minified JSON, longer than any name: a block
];

function randomData(seed: number): Record<string, unknown> {
  let s = seed;
  const rand = (n: number) => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s % n;
  };
  const str = () =>
    HOSTILE[rand(HOSTILE.length)] + (rand(3) === 0 ? HOSTILE[rand(HOSTILE.length)] : "");
  const leaf = (): unknown => [str(), rand(1000) - 500, rand(2) === 0, null, 1.25][rand(5)];
  const entry = () => {
    const e: Record<string, unknown> = {};
    for (let k = 0; k < 1 + rand(4); k++) e[`f${k}`] = rand(6) === 0 ? [str(), rand(9)] : leaf();
    if (rand(5) === 0) e["odd key=x"] = str();
    if (rand(4) === 0) e.output = `${str()}\n${str()}`;
    return e;
  };
  const data: Record<string, unknown> = {};
  if (rand(3) === 0) {
    data.variables = { "MY-VAR.x": str(), "a b": str(), "k=v": [str()], 'q"': { "\n": 1 } };
  }
  for (let k = 0; k < 1 + rand(6); k++) {
    const kind = rand(6);
    data[`k${k}`] = kind === 0
      ? Array.from({ length: 1 + rand(3) }, entry)
      : kind === 1
      ? { inner: leaf(), deeper: { x: leaf() }, list: [str()] }
      : kind === 2
      ? [str(), str()]
      : kind === 3
      ? `${str()}\n${str()}\n${str()}`
      : leaf();
  }
  return data;
}

Deno.test("renderReply: every value comes back exactly, hostile strings included", () => {
  for (let seed = 1; seed <= 3_000; seed++) {
    const data = randomData(seed);
    const text = renderReply("Summary line.", data);
    const back = parseRendered(text);
    assert.equal(back.summary, "Summary line.");
    assert.deepEqual(back.data, data, `seed ${seed}:\n${text}`);
  }
});

Deno.test("renderReply: a long text is shown as it is, and costs less than its JSON", () => {
  const text = Array.from({ length: 200 }, (_, i) => `$ echo "row ${i}"\\t`).join("\n");
  const rendered = renderReply("Captured.", { paneId: "%3", text, totalLines: 200 });
  assert.ok(rendered.includes('$ echo "row 7"\\t\n'), "rows as they are");
  assert.ok(rendered.length < JSON.stringify({ paneId: "%3", text, totalLines: 200 }).length);
  assert.ok(rendered.startsWith("Captured.\npaneId: %3\ntext:\n```\n"));
});

Deno.test("renderReply: no control character reaches the text", () => {
  const rendered = renderReply("s", {
    title: "\x1b]0;owned\x07",
    rows: [{ name: "a\x1bb" }],
    text: "x\x1b[2J\ny\u009b2J",
    list: ["\u009b", "\u2028"],
  });
  // deno-lint-ignore no-control-regex
  assert.doesNotMatch(rendered, /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]/);
});

Deno.test("renderReply: fields every entry shares are written once, and come back on each", () => {
  const panes = Array.from({ length: 4 }, (_, i) => ({
    id: `%${i}`,
    dead: false,
    title: "two words",
    omitted: 0,
    nothing: null,
    placements: [{ index: 0 }],
    ...(i === 2 ? {} : { cwd: "/tmp" }),
  }));
  const text = renderReply("4 panes.", { panes });
  // Nested values too: the same placements on every entry are written once.
  assert.match(
    text,
    /^\* every entry: dead=false title="two words" omitted=0 nothing=null placements=\[\{"index":0\}\]$/m,
  );
  assert.match(text, /^- id=%2$/m, "cwd is not on every entry");
  assert.doesNotMatch(text, /^- .*(?:dead|placements)=/m);
  assert.deepEqual(parseRendered(text).data, { panes });
  // Two entries are written in full; a list of scalars is one JSON line.
  assert.doesNotMatch(renderReply("s", { panes: panes.slice(0, 2) }), /every entry/);
  // Every field shared: each entry is `{}` after the shared line, and still comes back.
  const same = Array.from({ length: 3 }, () => ({ a: 1, b: "x" }));
  assert.deepEqual(parseRendered(renderReply("s", { same })).data, { same });
});

Deno.test("renderReply: shared fields come back exactly for hostile values", () => {
  let s = 7;
  const rand = (n: number) => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s % n;
  };
  let sharedLines = 0;
  for (let round = 0; round < 2_000; round++) {
    const values = [HOSTILE[rand(HOSTILE.length)], HOSTILE[rand(HOSTILE.length)], rand(3), true];
    const entries = Array.from({ length: 3 + rand(4) }, () => {
      const e: Record<string, unknown> = {};
      for (const k of ["a", "odd key=x", "b\nc", "d"]) {
        if (rand(6) !== 0) e[k] = values[rand(rand(3) === 0 ? 4 : 1)];
      }
      return e;
    });
    const data = { entries };
    const text = renderReply("s", data);
    if (text.includes("\n* every entry: ")) sharedLines++;
    assert.deepEqual(parseRendered(text).data, data, text);
  }
  assert.ok(sharedLines > 500, `only ${sharedLines} rounds shared a field`);
});

Deno.test("renderReply: the text `\\x07` a pane printed reads apart from a bell it rang", () => {
  const typed = renderReply("s", { text: "ring\\x07\nline2" });
  const rang = renderReply("s", { text: "ring\x07\nline2" });
  assert.notEqual(typed, rang);
  assert.ok(typed.includes("ring\\\\x07"), typed);
  assert.ok(rang.includes("ring\\x07"), rang);
  // Backslashes elsewhere stay single.
  assert.ok(renderReply("s", { text: "C:\\path\n\\n" }).includes("C:\\path\n\\n\n"));
  for (const text of ["\\\x07\n", "\\\\x07\n", "\\\\\x1b\n\\", "x\\\\\\x41\n"]) {
    assert.deepEqual(parseRendered(renderReply("s", { text })).data, { text });
  }
});

/** Every block the text opens is closed before its next line outside a block. */
function fencesClosed(text: string): boolean {
  let fence: string | null = null;
  for (const line of text.split("\n").slice(1)) {
    if (fence === null && /^`{3,}$/.test(line)) fence = line;
    else if (fence !== null && line === fence) fence = null;
  }
  return fence === null;
}

Deno.test("renderReply: a text over its bound on the wire is cut at a line, fences closed, facts kept", () => {
  // Backspaces cost two bytes in the structured JSON but five on the wire as `\x08` in a block.
  const buffer = Array.from({ length: 1_500 }, () => "\b".repeat(79)).join("\n");
  const data = { name: "b1", text: buffer, complete: false, omittedBytes: 12, droppedLines: 3 };
  const max = 49_001;
  const text = renderReply("Buffer b1.", data, max);
  assert.ok(jsonStringBytes(text) + 2 <= max, `${jsonStringBytes(text)} bytes on the wire`);
  assert.ok(fencesClosed(text), "the cut closes the open block");
  const lines = text.split("\n");
  const note = lines.findIndex((l) => l.startsWith("[text cut here: "));
  assert.ok(note > 0, "the cut says so");
  assert.match(
    lines[note],
    /more lines \(\d+ characters\) left out; the result's own facts follow/,
  );
  assert.deepEqual(lines.slice(note + 1), [
    "complete: false",
    "omittedBytes: 12",
    "droppedLines: 3",
  ]);
  assert.equal(lines[0], "Buffer b1.");
  assert.equal(lines[1], "name: b1", "facts before the cut stay where they were");
  // Uncut under a roomy bound, and nothing is cut when it fits.
  assert.deepEqual(parseRendered(renderReply("s", data, 10_000_000)).data, data);
});

Deno.test("renderReply: a list of names full of C1 characters stays within the bound", () => {
  const windows = Array.from({ length: 61 }, (_, i) => ({
    id: `@${i}`,
    name: "\u0085".repeat(300) + i,
    panes: i,
  }));
  const max = 49_001;
  const text = renderReply("61 windows.", { windows, complete: true, omittedEntries: 0 }, max);
  assert.ok(jsonStringBytes(text) + 2 <= max);
  assert.ok(text.endsWith("complete: true\nomittedEntries: 0"), text.slice(-200));
  // Every kept entry line is whole.
  for (const line of text.split("\n").filter((l) => l.startsWith("- "))) {
    assert.match(line, /^- id=@\d+ name="(\\u0085){300}\d+" panes=\d+$/);
  }
});

Deno.test("renderReply: one long line of quotes over its bound keeps its start, says so, and fits", () => {
  // Minified JSON, a JSON log line: quotes everywhere, each `\\\"` (four bytes) on the wire as a
  // JSON string in the text, `\\"` (two) in a block.
  const output = '{"a":"b"}'.repeat(6_000);
  const data = { paneId: "%1", output, outputComplete: false, omittedBytes: 9, timedOut: false };
  const max = 49_001;
  const text = renderReply("Ran.", data, max);
  assert.ok(jsonStringBytes(text) + 2 <= max, `${jsonStringBytes(text)} bytes on the wire`);
  assert.ok(fencesClosed(text));
  const lines = text.split("\n");
  assert.deepEqual(lines.slice(0, 4), ["Ran.", "paneId: %1", "output:", "```"]);
  assert.ok(output.startsWith(lines[4]) && lines[4].length > 20_000, "the line's start is kept");
  assert.equal(lines[5], "```");
  assert.match(
    lines[6],
    /^\[text cut here: the rest of that line and 0 more lines \(\d+ characters\) left out; the result's own facts follow/,
  );
  assert.deepEqual(lines.slice(7), ["outputComplete: false", "omittedBytes: 9", "timedOut: false"]);
  // Within its bound it is a block of one line, and comes back exactly.
  assert.deepEqual(parseRendered(renderReply("Ran.", data)).data, data);
  // A cut never ends inside an escape it shows, nor between the halves of a character: the
  // kept start reads, by the block's rules, as the start of the line.
  for (
    const [unit, max] of ["\x07", "\\x07", "🙂", "\\", "ab\\\\\x1b"].flatMap((u) =>
      [0, 1, 2, 3, 4, 5, 6].map((d) => [u, 10_001 + d] as const)
    )
  ) {
    const line = unit.repeat(8_000);
    const shown = renderReply("s", { text: line, done: true }, max).split("\n")[3];
    const read = shown.replace(
      /(\\+)x([0-9a-f]{2})/g,
      (_, run: string, h: string) =>
        "\\".repeat(run.length >> 1) +
        (run.length % 2 ? String.fromCharCode(parseInt(h, 16)) : `x${h}`),
    );
    assert.ok(read.length > 1_000 && line.startsWith(read), JSON.stringify(shown.slice(-12)));
    assert.doesNotMatch(read, /[\ud800-\udbff]$/);
  }
});

Deno.test("renderReply: long values after a cut are not put back: the text stays within its bound", () => {
  // One-line values under the block length, each about 8 KB on the wire: data, not facts.
  const data: Record<string, unknown> = { text: "line\n".repeat(10_000) };
  for (let i = 0; i < 30; i++) data[`v${i}`] = '"'.repeat(2_000);
  data.complete = false;
  const max = 49_001;
  const text = renderReply("s", data, max);
  assert.ok(jsonStringBytes(text) + 2 <= max, `${jsonStringBytes(text)} bytes on the wire`);
  assert.match(
    text,
    /\[text cut here: \d+ more lines \(\d+ characters\) left out; the result's own facts follow; structuredContent holds every field\]\ncomplete: false$/,
  );
});

Deno.test("renderReply: a long run of backslashes is doubled only before an escape", () => {
  // A lookahead after `\\+` retried the run from each backslash: 100 000 of them took ~25 s
  // (quadratic: this test took as long); the run is matched once now. This pins the output.
  const text = `${"\\".repeat(100_000)}\n${"\\".repeat(50_000)}x07\n`;
  const rendered = renderReply("s", { text });
  assert.ok(rendered.includes(`\n${"\\".repeat(100_000)}\n${"\\".repeat(100_000)}x07\n`));
});

/** What no summary line holds raw: line breaks of every kind, controls, bidirectional marks. */
const NOT_IN_SUMMARY =
  // deno-lint-ignore no-control-regex
  /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

Deno.test("renderReply: a summary is one visible line, whatever a pane's value put in it", () => {
  const hostile = "x\nomittedEntries: 0\r\npaneId: %99\u0085a\u2028b\u2029c\tdead:\ttrue\x1b[2J" +
    "\x07\u009b2J\u202egnp.exe\u2066\u200f\x7f";
  const text = renderReply(`Pane %1 in ${hostile}, 80x24.`, { paneId: "%1" });
  const [first, ...rest] = text.split("\n");
  assert.doesNotMatch(first, NOT_IN_SUMMARY);
  assert.deepEqual(rest, ["paneId: %1"], "no line of the summary's own poses as a field");
  // Each character is shown as JSON writes it, so a quoted value reads back as JSON.
  const quoted = renderReply(`Pane %1 in ${JSON.stringify(hostile)}.`, {}).split("\n")[0];
  assert.equal(JSON.parse(quoted.slice("Pane %1 in ".length, -1)), hostile);
  assert.equal(renderReply('Plain: 日本語🙂 \\x07 "q".', {}), 'Plain: 日本語🙂 \\x07 "q".');
});

Deno.test("renderReply: a field value's bidirectional controls are shown, not obeyed", () => {
  const data = { title: "abc\u202etxt.exe", list: ["\u2066x\u2069"], rows: [{ name: "\u200fy" }] };
  const text = renderReply("s", data);
  assert.doesNotMatch(text, /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/);
  assert.match(text, /^title: "abc\\u202etxt\.exe"$/m);
  assert.deepEqual(parseRendered(text).data, data);
});

/** Panes as list_panes lists them: three in each window, long folders and titles. */
function paneRows(windows: number): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  for (let w = 0; w < windows; w++) {
    const session = w % 5;
    for (let p = 0; p < 3; p++) {
      const id = w * 3 + p;
      rows.push({
        active: p === 0,
        command: id === 7 ? "vim" : "bash",
        cwd: `/home/someone/src/github.com/acme-corporation/platform-infrastructure/services/s${w}`,
        dead: false,
        height: p === 2 ? 24 : 25,
        id: `%${id}`,
        index: p,
        isAttended: false,
        isCallerPane: id === 4,
        metadataComplete: true,
        omittedMetadataBytes: 0,
        omittedPlacements: 0,
        placements: [{
          index: Math.floor(w / 5),
          sessionId: `$${session}`,
          sessionName: `project-${session}`,
        }],
        placementsComplete: true,
        title: `build: payments-gateway (release, x86_64) — step ${id}/60: compiling`,
        width: p === 2 ? 220 : 110,
        windowId: `@${w}`,
        windowName: `project-${session}-win${w}`,
      });
    }
  }
  return rows;
}

Deno.test("renderReply: a list of panes says once what a window's panes share; placements and flags read lean", () => {
  const data = { complete: true, omittedEntries: 0, panes: paneRows(20) };
  const text = renderReply("60 panes.", data);
  assert.deepEqual(parseRendered(text).data, data);
  const wire = jsonStringBytes(text) + 2;
  const json = new TextEncoder().encode(JSON.stringify(data)).length;
  // Every field on every line, placements as JSON: 0.8 of the JSON; now under half of it.
  assert.ok(wire <= json / 2, `text ${wire} bytes on the wire, structured content ${json}`);
  const lines = text.split("\n");
  assert.deepEqual(lines.slice(4, 8), [
    "* placements: sessionName($sessionId):index, comma-separated",
    "* every entry: dead=false isAttended=false metadataComplete=true omittedMetadataBytes=0 " +
    "omittedPlacements=0 placementsComplete=true",
    "* unless an entry says otherwise: active=false isCallerPane=false",
    "* each + line: fields of every entry under it, up to the next + line",
  ]);
  // A window's id, placements, name and its panes' folder once, before its panes; each pane
  // with its own fields, a flag only where it is not as usual.
  const title = (id: number) =>
    `title="build: payments-gateway (release, x86_64) — step ${id}/60: compiling"`;
  const cwd = "cwd=/home/someone/src/github.com/acme-corporation/platform-infrastructure/services";
  assert.deepEqual(lines.slice(12, 20), [
    `+ windowId=@1 ${cwd}/s1 placements=project-1($1):0 windowName=project-1-win1 command=bash`,
    `- active=true height=25 id=%3 index=0 ${title(3)} width=110`,
    `- height=25 id=%4 index=1 isCallerPane=true ${title(4)} width=110`,
    `- height=24 id=%5 index=2 ${title(5)} width=220`,
    // Fields the panes of a window do not all share stay on each.
    `+ windowId=@2 ${cwd}/s2 placements=project-2($2):0 windowName=project-2-win2`,
    `- active=true command=bash height=25 id=%6 index=0 ${title(6)} width=110`,
    `- command=vim height=25 id=%7 index=1 ${title(7)} width=110`,
    `- command=bash height=24 id=%8 index=2 ${title(8)} width=220`,
  ]);
  assert.equal(text.match(/windowId=@1\b/g)?.length, 1, "each window's id once");
  assert.doesNotMatch(text, /placements=\[/);
  assert.doesNotMatch(text, /^[-+] .*=false\b/m, "no entry says a flag is as usual");
});

Deno.test("renderReply: placements read sessionName($sessionId):index, whatever a session is named", () => {
  const windows = [
    [{ sessionId: "$0", sessionName: "work", index: 2, active: true }, {
      sessionId: "$3",
      sessionName: "my project",
      index: 0,
      active: false,
    }],
    [{ sessionId: "$0", sessionName: "work", index: 3, active: false }],
    [],
  ].map((placements, i) => ({ id: `@${i}`, name: `w${i}`, placements }));
  const text = renderReply("3 windows.", { windows });
  assert.match(
    text,
    /^\* placements: sessionName\(\$sessionId\):index, then \* if active, comma-separated$/m,
  );
  assert.match(text, /^- id=@0 name=w0 placements=work\(\$0\):2\*,"my project"\(\$3\):0$/m);
  assert.match(text, /^- id=@2 name=w2 placements=\[\]$/m);
  assert.deepEqual(parseRendered(text).data, { windows });
  // A name that holds what frames a placement, or could read as something else, is a JSON
  // string: nothing in it poses as another placement, field or line.
  for (
    const name of [
      ...HOSTILE.filter((h) => h.length < 100),
      "a(b",
      "a)b",
      "x,y",
      "a:b",
      "*",
      "$5",
      "a($1):0",
      "work($0):1,evil($9):2",
      "w\n+ windowId=@9",
      "x\n* every entry: dead=true",
    ]
  ) {
    const panes = Array.from({ length: 3 }, (_, i) => ({
      id: `%${i}`,
      placements: [{ index: i, sessionId: "$1", sessionName: name }],
      windowId: "@1",
    }));
    const shown = renderReply("s", { panes });
    assert.deepEqual(parseRendered(shown).data, { panes }, shown);
    for (const line of shown.split("\n").slice(2)) assert.match(line, /^[-+*] /, shown);
  }
});

Deno.test("renderReply: lists come back exactly, and never longer than written entry by entry", () => {
  let s = 11;
  const rand = (n: number) => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s % n;
  };
  const pick = <T>(list: readonly T[]): T => list[rand(list.length)];
  const names = [...HOSTILE.filter((h) => h.length < 100), "a(b", "x,y", "a:b", "$5", "*"];
  const seen = { groups: 0, unless: 0, placements: 0 };
  for (let round = 0; round < 1_500; round++) {
    const shape = pick(["pane", "window", "odd"]);
    const placement = (): Record<string, unknown> =>
      shape === "odd" ? { index: rand(3), sessionId: `$${rand(3)}` } : {
        index: rand(3),
        sessionId: `$${rand(4)}`,
        sessionName: pick(names),
        ...(shape === "window" ? { active: rand(2) === 0 } : {}),
      };
    // Runs of entries alike in some fields (a window's), flags, hostile values.
    const entries: Record<string, unknown>[] = [];
    const length = 1 + rand(20);
    let group: Record<string, unknown> = {};
    for (let i = 0; i < length; i++) {
      if (i === 0 || rand(3) === 0) {
        group = {
          windowId: `@${rand(5)}`,
          name: pick(names),
          placements: Array.from({ length: rand(3) }, placement),
        };
      }
      const e: Record<string, unknown> = { id: `%${i}`, ...group };
      // Flags on every entry, or on most.
      for (const k of ["isCallerPane", "active"]) {
        if (round % 2 === 0 || rand(8) !== 0) e[k] = rand(5) === 0;
      }
      if (rand(3) === 0) e.value = pick([pick(names), rand(3), null]);
      if (rand(9) === 0) e.output = `${pick(names)}\n${pick(names)}`;
      if (rand(9) === 0) e.nested = { x: pick(names) };
      entries.push(e);
    }
    const data = { entries, complete: true };
    const text = renderReply("s", data);
    assert.deepEqual(parseRendered(text).data, data, text);
    if (text.includes("\n+ ")) seen.groups++;
    if (text.includes("\n* unless")) seen.unless++;
    if (text.includes("\n* placements: ")) seen.placements++;
    // What the entries share is said only where that makes the text shorter: within what they
    // take written one by one (entryWireBytes), but for the line of the fields all share.
    const every = text.split("\n").find((l) => l.startsWith("* every entry: "));
    const full = jsonStringBytes("s\nentries (n):\ncomplete: true") + 2 +
      entries.reduce((n, e) => n + entryWireBytes(e), 0);
    assert.ok(
      jsonStringBytes(text) + 2 <= full + (every ? jsonStringBytes(every) + 2 : 0),
      `${jsonStringBytes(text) + 2} > ${full}:\n${text}`,
    );
  }
  for (const [what, n] of Object.entries(seen)) assert.ok(n > 50, `only ${n} rounds with ${what}`);
});
