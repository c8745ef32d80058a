import assert from "node:assert/strict";
import { RecordingRunner, TestTmux, waitFor } from "../../tests/helpers/tmux.ts";
import { escapeTrailingSemicolon } from "./format.ts";
import {
  describeKeyRefusals,
  keyEncoding,
  type KeyRefusal,
  refusedKeys,
  tmuxSpelling,
} from "./keys.ts";
import { TmuxRunner } from "./run.ts";

type Server = TestTmux & {
  ids: { sessionId: string; windowId: string; paneId: string };
  files: string[];
};

/** A runner plus a private server, torn down together. */
async function withServer(fn: (t: Server, runner: TmuxRunner) => Promise<void>): Promise<void> {
  const t = await TestTmux.start();
  const runner = new TmuxRunner();
  const files: string[] = [];
  try {
    await fn(Object.assign(t, { files }), runner);
  } finally {
    await runner.close();
    await t.kill();
    for (const file of files) await Deno.remove(file).catch(() => {});
  }
  assert.equal(runner.running, 0, "no tmux child left behind");
}

/**
 * A pane whose terminal is raw and whose every received byte lands in a file; `setup` is
 * printed first (a request for extended keys). `send` delivers each name with `send-keys` and
 * returns the bytes each one produced, told apart by markers typed literally between them.
 */
async function recorder(
  t: Server,
  setup = "",
): Promise<{ paneId: string; send: (names: readonly string[]) => Promise<Map<string, string>> }> {
  const file = await Deno.makeTempFile({ prefix: "tmux-mcp-keys-" });
  t.files.push(file);
  const paneId = (await t.tmux(
    "new-window",
    "-d",
    "-P",
    "-F",
    "#{pane_id}",
    `stty raw -echo; printf '${setup}ready'; exec cat > '${file}'`,
  )).trim();
  await waitFor(
    async () =>
      (await t.tmux("display-message", "-p", "-t", paneId, "#{pane_current_command}"))
        .trim() === "cat",
    "cat to run",
  );
  // tmux reads what the pane printed at its own pace, cat running or not: the request for
  // extended keys is in effect once the word printed after it shows.
  await waitFor(
    async () => (await t.tmux("capture-pane", "-p", "-t", paneId)).includes("ready"),
    "the pane's setup read by tmux",
  );
  let round = 0;
  const send = async (names: readonly string[]) => {
    const got = new Map<string, string>();
    for (let start = 0; start < names.length; start += 100) {
      const chunk = names.slice(start, start + 100);
      const end = `⦃end${round++}⦄`;
      const argv = chunk.flatMap((name, i) => [
        ...["send-keys", "-t", paneId, "-l", `⦃${i}⦄`, ";"],
        ...["send-keys", "-t", paneId, "--", escapeTrailingSemicolon(name), ";"],
      ]);
      const before = (await Deno.readFile(file)).length;
      await t.tmux(...argv, "send-keys", "-t", paneId, "-l", end);
      const data = await waitFor(async () => {
        const d = new TextDecoder().decode((await Deno.readFile(file)).subarray(before));
        return d.endsWith(end) ? d.slice(0, -end.length) : null;
      }, `the keys before ${end}`);
      for (const piece of data.split("⦃").slice(1)) {
        const [index, bytes] = piece.split("⦄");
        got.set(chunk[Number(index)], bytes);
      }
    }
    return got;
  };
  return { paneId, send };
}

const BASES = [
  ...Array.from({ length: 12 }, (_, i) => `F${i + 1}`),
  ..."IC Insert DC Delete Home End NPage PageDown PgDn PPage PageUp PgUp Up Down Left Right"
    .split(" "),
  ..."Tab BTab Space BSpace Enter Escape KPEnter".split(" "),
  ...[..."/*-+.0123456789"].map((c) => `KP${c}`),
  ...Array.from({ length: 0x7e - 0x20 }, (_, i) => String.fromCharCode(0x21 + i)),
  ..."é 日 ß Ω 🙂".split(" "),
];
const PREFIXES = ["", "C-", "M-", "S-", "C-M-", "C-S-", "M-S-", "C-M-S-"];
/** Other spellings tmux reads: any case, any order, `^` for Control, codes, pseudo keys. */
const SPELLINGS = [
  ..."None none NONE Any any c-a m-a s-up S-up c-m-a M-C-a S-C-Up C-C-a ^a ^A ^1 ^[ ^? ^é"
    .split(" "),
  ..."^Space ^Up ^M-a ^^ ^ up ENTER kp1 kpenter btab s-tab c-enter C-s-A 0x41 0x3 0xe9 F13"
    .split(" "),
  ..."MouseDown1Pane mousedown1pane User0 C-M-S-a c-é m-s-é".split(" "),
];

/**
 * Whether the bytes `name` produced are that key: not the name typed as text, not nothing, and
 * not the same as with its Control and Shift left out (a modifier tmux dropped).
 */
function asAsked(name: string, got: Map<string, string>): boolean {
  const bytes = got.get(name)!;
  if (bytes === "" || ([...name].length > 1 && bytes === name)) return false;
  // CSI u with a number from 0x10e000: tmux's own number for the key (its KEYC_BASE and up, in
  // Unicode's private use plane), which no program reads as that key.
  const csiU = /^\[(\d+);\d+u$/.exec(bytes.startsWith("\x1b") ? bytes.slice(1) : "");
  if (csiU && Number(csiU[1]) >= 0x10e000) return false;
  const prefix = /^\^?(?:[CMScms]-)*/.exec(name.length > 1 ? name : "")![0];
  if (!/[cs^]/i.test(prefix)) return true;
  const bare = `${/m-/i.test(prefix) ? "M-" : ""}${name.slice(prefix.length)}`;
  return bare === name || !got.has(bare) || got.get(bare) !== bytes;
}

Deno.test("a key name is refused exactly when tmux would not send that key", async () => {
  await withServer(async (t, runner) => {
    const names = [...new Set([...PREFIXES.flatMap((p) => BASES.map((b) => p + b)), ...SPELLINGS])];
    const bares = [...new Set(names.map((n) => n.replace(/^\^?(?:[CMScms]-)*/, "")))]
      .filter((b) => b !== "");
    const all = [...new Set([...names, ...bares, ...bares.map((b) => `M-${b}`)])];
    const standard = await (await recorder(t)).send(all);
    // A program that turned on extended keys (CSI > 4 ; 1 m) gets modified keys as CSI u.
    const extended = await (await recorder(t, "\\033[>4;1m")).send(all);
    const refused = new Map<string, KeyRefusal>();
    for (let i = 0; i < names.length; i += 200) {
      const chunk = names.slice(i, i + 200);
      for (const r of await refusedKeys(runner, { socketName: t.socket }, "s", chunk)) {
        refused.set(r.key, r);
      }
    }
    const wrong: string[] = [];
    for (const name of names) {
      const r = refused.get(name);
      const shown = `${JSON.stringify(name)} (${r ? `refused ${r.reason}` : "accepted"}; ` +
        `got ${JSON.stringify(standard.get(name))})`;
      if (!r !== asAsked(name, standard)) wrong.push(shown);
      // "A program that turned on extended keys would get it": true of those said so only.
      if (r?.reason === "unencoded" && r.extended !== asAsked(name, extended)) {
        wrong.push(`${shown}, with extended keys got ${JSON.stringify(extended.get(name))}`);
      }
    }
    assert.deepEqual(wrong, []);
    // Pinned examples of each kind.
    const kind = (k: string) => refused.get(k)?.reason ?? "sent";
    assert.deepEqual(
      ["None", "none", "any", "mousedown1pane", "S-a", "C-S-a", "C-1", "S-Enter", "C-Tab"].map(
        kind,
      ),
      ["unsendable", "unsendable", "unsendable", "unsendable", ...Array(5).fill("unencoded")],
    );
    for (const k of ["C-日", "S-日", "C-é", "C-M-é", "^é"]) {
      assert.equal(refused.get(k)?.extended, false, `${k}: tmux drops Control and Shift always`);
    }
    for (const k of ["C-a", "C-2", "C-?", "C-Space", "M-日", "S-Up", "C-M-S-F1", "^M-a", "0x41"]) {
      assert.equal(kind(k), "sent", k);
    }
    // Every key a refusal suggests instead is itself sent as asked.
    const suggested = [...refused.values()].flatMap((r) =>
      [...(r.detail ?? "").matchAll(/the key "([^"]+)"/g)].map((m) => m[1])
    );
    assert.ok(suggested.length > 100, `${suggested.length} suggestions`);
    assert.deepEqual(
      await refusedKeys(runner, { socketName: t.socket }, "s", [...new Set(suggested)]),
      [],
    );
  });
});

Deno.test("with extended-keys always, keys only extended keys carry pass; others stay refused", async () => {
  await withServer(async (t, runner) => {
    const address = { socketName: t.socket };
    const keys = ["S-a", "C-1", "S-Enter", "C-é", "C-a"];
    assert.deepEqual((await refusedKeys(runner, address, "s", keys)).map((r) => r.key), [
      "S-a",
      "C-1",
      "S-Enter",
      "C-é",
    ]);
    await t.tmux("set-option", "-s", "extended-keys", "always");
    const refused = await refusedKeys(runner, address, "s", keys);
    assert.deepEqual(refused.map((r) => r.key), ["C-é"]);
    // A pane made since gets them as CSI u, as the verdict says.
    const got = await (await recorder(t)).send(keys);
    assert.equal(got.get("S-a"), "\x1b[97;2u");
    assert.equal(got.get("C-1"), "\x1b[49;5u");
    assert.equal(got.get("C-é"), "é");
  });
});

Deno.test("verdicts are kept for the 8 servers asked most recently: a long run meets many", async () => {
  const t = await TestTmux.start();
  // Every question a tmux process of its own, so that each is counted.
  const runner = new RecordingRunner({ control: false });
  try {
    const asked = () => runner.started.filter((argv) => argv.includes("list-keys")).length;
    const ask = (server: number) =>
      refusedKeys(runner, { socketName: t.socket }, `server ${server}`, ["C-a"]);
    for (let server = 0; server <= 8; server++) assert.deepEqual(await ask(server), []);
    assert.equal(asked(), 9, "asked once per server");
    await ask(8);
    assert.equal(asked(), 9, "the latest server's verdict is kept");
    await ask(0);
    assert.equal(asked(), 10, "the least recently asked of nine servers was forgotten");
  } finally {
    await runner.close();
    await t.kill();
  }
});

Deno.test("keyEncoding: what tmux sends instead, and what to send", () => {
  assert.deepEqual(keyEncoding("C-a"), { kind: "sent" });
  assert.deepEqual(keyEncoding("C-S-a"), {
    kind: "extended",
    outcome: "type the text C-S-a",
    instead: 'the key "C-a"',
  });
  assert.deepEqual(keyEncoding("S-a"), {
    kind: "extended",
    outcome: "type the text S-a",
    instead: '"A" in text',
  });
  assert.deepEqual(keyEncoding("C-1"), {
    kind: "extended",
    outcome: "send nothing",
    instead: null,
  });
  assert.deepEqual(keyEncoding("C-M-3"), {
    kind: "extended",
    outcome: "type the text C-M-3",
    instead: 'the key "M-Escape"',
  });
  assert.deepEqual(keyEncoding("S-Tab"), {
    kind: "extended",
    outcome: "type the text S-Tab",
    instead: 'the key "BTab"',
  });
  assert.deepEqual(keyEncoding("C-é"), {
    kind: "never",
    outcome: "send é without Control",
    instead: '"é" in text',
  });
  assert.deepEqual(keyEncoding("C-M-S-日"), {
    kind: "never",
    outcome: "send M-日 without Control and Shift",
    instead: 'the key "M-日"',
  });
});

Deno.test("describeKeyRefusals names each refused key with its reason and remedy", () => {
  const { message, hint } = describeKeyRefusals([
    { key: "Ctrl-Cee", reason: "invalid" },
    { key: "None", reason: "unsendable" },
    {
      key: "C-1",
      reason: "unencoded",
      extended: true,
      detail: "tmux would send nothing (a terminal's standard keys have no code for it)",
    },
  ]);
  assert.equal(
    message,
    'Key name "Ctrl-Cee" is not known to tmux (tmux would have typed it as text); "None" is a ' +
      'mouse or pseudo key that a program cannot be sent; "C-1" cannot reach a program as that ' +
      "key: " +
      "tmux would send nothing (a terminal's standard keys have no code for it). Nothing was sent.",
  );
  assert.match(hint, /^tmux sends such a key only to a program that turned on extended keys/);
  assert.match(hint, /Key names look like C-c/);
  const dropped = describeKeyRefusals([
    { key: "C-é", reason: "unencoded", extended: false, detail: "tmux would send é" },
  ]);
  assert.equal(
    dropped.message,
    '"C-é" cannot reach a program as that key: tmux would send é. Nothing was sent.',
  );
  assert.doesNotMatch(dropped.hint, /extended/);
});

/** Keys as other programs and people write them, and tmux's name the refusal suggests. */
const OTHER_SPELLINGS: readonly [string, string | null][] = [
  ["Ctrl-C", "C-c"],
  ["ctrl+c", "C-c"],
  ["Control-x", "C-x"],
  ["CTRL + D", "C-d"],
  ["Ctrl+Alt+Delete", "C-M-DC"],
  ["Alt+x", "M-x"],
  ["Meta-Enter", "M-Enter"],
  ["Option+Left", "M-Left"],
  ["Shift+Tab", "BTab"],
  ["Shift+a", "A"],
  ["Shift+Up", "S-Up"],
  ["Ctrl+Left", "C-Left"],
  ["Return", "Enter"],
  ["RETURN", "Enter"],
  ["Esc", "Escape"],
  ["Backspace", "BSpace"],
  ["Delete", null], // tmux knows it (DC)
  ["Del", "DC"],
  ["PgUp", null], // tmux knows it
  ["Page_Down", "PageDown"],
  ["ArrowUp", "Up"],
  ["left_arrow", "Left"],
  ["Spacebar", "Space"],
  ["ctrl+f5", "C-F5"],
  ["\n", "Enter"],
  ["\r", "Enter"],
  ["\t", "Tab"],
  ["\u001b", "Escape"],
  ["\u007f", "BSpace"],
  ["\u0003", "C-c"],
  [" ", "Space"],
  // Keys no terminal can send as asked, or that mean nothing here: no suggestion.
  ["Ctrl+Enter", null],
  ["Ctrl+Shift+A", null],
  ["Cmd+C", null],
  ["Super+x", null],
  ["Ctrl-", null],
  ["Hello", null],
  ["echo hello", null],
  ["Ctrl-é", null],
  ["Ctrl+\u001b", null],
  ["Alt+\u202e", null],
  ["Ctrl+\u0085", null],
  ["", null],
];

Deno.test("a key written as another program writes it is answered with tmux's name for it", async () => {
  for (const [written, spelt] of OTHER_SPELLINGS) {
    if (spelt === null || written === spelt) continue;
    assert.equal(tmuxSpelling(written), spelt, JSON.stringify(written));
  }
  for (const [written, spelt] of OTHER_SPELLINGS) {
    if (spelt === null && !["Delete", "PgUp"].includes(written)) {
      assert.equal(tmuxSpelling(written), null, JSON.stringify(written));
    }
  }
  await withServer(async (t, runner) => {
    const address = { socketName: t.socket };
    // Each written name tmux refuses gets its suggestion in the refusal's words.
    const refused = await refusedKeys(runner, address, "s", OTHER_SPELLINGS.map(([w]) => w));
    const suggested = new Map(OTHER_SPELLINGS);
    for (const r of refused) {
      const spelt = suggested.get(r.key);
      const { message } = describeKeyRefusals([r]);
      if (spelt) {
        assert.match(message, new RegExp(`; did you mean ${spelt.replace(/[-+]/g, "\\$&")}\\?\\)`));
      } else assert.doesNotMatch(message, /did you mean/, message);
    }
    // Those tmux knows itself are sent as they are: nothing to suggest.
    for (const known of ["Delete", "PgUp", "C-c", "Enter"]) {
      assert.ok(!refused.some((r) => r.key === known), known);
    }
    // ...and every name that has a suggestion is one tmux refuses, so the suggestion is shown.
    assert.deepEqual(
      refused.filter((r) => suggested.get(r.key)).map((r) => r.key).sort(),
      OTHER_SPELLINGS.filter(([, s]) => s !== null).map(([w]) => w).sort(),
    );
    // Every suggestion is a key tmux knows and sends as asked...
    const spellings = [...new Set(OTHER_SPELLINGS.flatMap(([, s]) => (s ? [s] : [])))];
    assert.deepEqual(await refusedKeys(runner, address, "s", spellings), []);
    // ...and a character's suggestion delivers that very character.
    const got = await (await recorder(t)).send(spellings);
    for (const [written, spelt] of OTHER_SPELLINGS) {
      if (spelt === null || [...written].length !== 1) continue;
      const expected = written === "\n" ? "\r" : written;
      assert.equal(got.get(spelt), expected, `${JSON.stringify(written)} as ${spelt}`);
    }
  });
});

Deno.test("several refused names: each suggestion says which name it is for", () => {
  const { message } = describeKeyRefusals([
    { key: "Ctrl-C", reason: "invalid" },
    { key: "Hello", reason: "invalid" },
    { key: "Return", reason: "invalid" },
  ]);
  assert.equal(
    message,
    'Key names "Ctrl-C", "Hello", "Return" are not known to tmux (tmux would have typed them ' +
      'as text; did you mean C-c for "Ctrl-C", Enter for "Return"?). Nothing was sent.',
  );
});
