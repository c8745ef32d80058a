/**
 * Key names: which strings tmux would send as a key rather than silently typing them as text.
 *
 * `send-keys` types an unknown name (`Ctrl-Cee`, `F13`) as its characters and exits 0, so a
 * typo would reach the program as text. tmux's own parser validates a name without side
 * effects: `list-keys -T root -- KEY` answers `invalid key: KEY` for a bad name and `unknown
 * key: KEY` (or the binding) for a good one. Verdicts are cached per server, since the names a
 * tmux knows do not change while it runs.
 *
 * A name tmux parses is not yet a key it can send. A terminal's standard keys have no code for
 * most modified keys (`C-1`, `S-a`, `C-S-a`, `S-Enter`, `C-Tab`): tmux sends those, as CSI u,
 * only to a program that turned on extended keys (or to every pane created while the server's
 * `extended-keys` is `always`), and to any other it sends nothing or types the name as text.
 * Which programs turned them on tmux does not show, so such a name passes only under `always`.
 * Control or Shift on a non-ASCII character (`C-é`), on BTab or on a keypad key never reaches a
 * program as asked. See {@link keyEncoding}; the rule was measured key by key on tmux 3.3a
 * (`keys_test.ts` holds the measurement).
 *
 * @module
 */

import { meantPhrase } from "../near_miss.ts";
import { execFast } from "./control.ts";
import { escapeTrailingSemicolon } from "./format.ts";
import type { TmuxRunner } from "./run.ts";
import { classifyStderr, TmuxError } from "./tmux_error.ts";
import type { ServerAddress } from "./server_address.ts";

/** Why a key name is refused. */
export interface KeyRefusal {
  readonly key: string;
  /**
   * `invalid`: tmux does not know it; `unsendable`: a mouse or pseudo key (`None`, `Any`) that
   * means nothing typed; `unencoded`: a key tmux cannot send to a program as that key.
   */
  readonly reason: "invalid" | "unsendable" | "unencoded";
  /** For `unencoded`: what the program would get instead, and what to send. */
  readonly detail?: string;
  /** For `unencoded`: a program that turned on extended keys would get it as asked. */
  readonly extended?: boolean;
}

/** Keys tmux knows but that make no sense to send to a program (tmux ignores case in names). */
const UNSENDABLE =
  /Mouse|Wheel|Drag|Click|^(?:[CMS]-)*(?:None|Any|PasteStart|PasteEnd|FocusIn|FocusOut|User\d+)$/i;

/** Longest key name accepted (tmux's longest, `C-M-S-BSpace`-like names, are far shorter). */
export const MAX_KEY_NAME = 32;

/**
 * How tmux sends a key name it parses: `sent` as that key to any program; `extended`: as that
 * key only to a program that turned on extended keys; `never`: to no program as that key.
 * `outcome` says what a program without extended keys gets instead, `instead` what to send
 * for the same effect there (null when nothing does).
 */
export type KeyEncoding =
  | { readonly kind: "sent" }
  | {
    readonly kind: "extended" | "never";
    readonly outcome: string;
    readonly instead: string | null;
  };

/** Keys with an escape sequence for every modifier (a terminal's cursor and function keys). */
const SEQUENCE_KEYS =
  /^(?:F(?:[1-9]|1[0-2])|IC|Insert|DC|Delete|Home|End|NPage|PageDown|PgDn|PPage|PageUp|PgUp|Up|Down|Left|Right)$/i;
/** Named keys that are one character (or a keypad key): modifiers reach them as C0 codes only. */
const CHARACTER_KEYS: ReadonlyMap<string, string> = new Map(
  ["Tab", "BTab", "Space", "BSpace", "Enter", "Escape", "KPEnter", ..."/*-+.0123456789"]
    .map((k) => (k.length === 1 ? `KP${k}` : k))
    .map((k) => [k.toLowerCase(), k]),
);
/**
 * What a terminal sends for Control with a character that has no C0 code of its own (xterm's
 * choices for digits); `2`, `6`, `-` and `/` tmux maps itself, but not together with Meta.
 */
const CONTROL_EQUIVALENTS: Readonly<Record<string, string>> = {
  "2": "C-Space",
  "3": "Escape",
  "4": "C-\\",
  "5": "C-]",
  "6": "C-^",
  "7": "C-_",
  "8": "BSpace",
  "-": "C-_",
  "/": "C-_",
};

/** `key` with Meta added, in tmux's order of modifiers. */
function withMeta(key: string): string {
  return key.startsWith("C-") ? `C-M-${key.slice(2)}` : `M-${key}`;
}

/** Whether tmux turns Control with this ASCII code into a C0 code (C-a, C-[, C-?, C-Space). */
function controlCode(code: number): boolean {
  return code === 32 || code === 63 || (code >= 64 && code <= 95) || (code >= 97 && code <= 122);
}

/**
 * How tmux sends key name `name` (one it parses; what it does not parse is for `list-keys`
 * to judge): its modifiers (`C-`, `M-`, `S-` in any case and order, or a leading `^` for
 * Control) on a cursor or function key, a character, or a named character key.
 */
export function keyEncoding(name: string): KeyEncoding {
  // A character by its code (`0x41`): tmux reads no modifiers there.
  if (name.startsWith("0x")) return { kind: "sent" };
  let rest = name;
  let ctrl = false;
  let meta = false;
  let shift = false;
  if (rest.length > 1 && rest[0] === "^") {
    ctrl = true;
    rest = rest.slice(1);
  }
  while (rest.length >= 2 && rest[1] === "-" && /^[cms]/i.test(rest)) {
    const m = rest[0].toLowerCase();
    if (m === "c") ctrl = true;
    else if (m === "m") meta = true;
    else shift = true;
    rest = rest.slice(2);
  }
  if ((!ctrl && !shift) || SEQUENCE_KEYS.test(rest)) return { kind: "sent" };
  const chars = [...rest];
  const named = CHARACTER_KEYS.get(rest.toLowerCase());
  if (chars.length !== 1 && named === undefined) return { kind: "sent" };
  const m = meta ? "M-" : "";
  if (named === undefined && rest.codePointAt(0)! > 127) {
    // A UTF-8 key: tmux sends the character, with ESC for Meta, and drops Control and Shift
    // whether or not the program reads extended keys.
    return {
      kind: "never",
      outcome: `send ${meta ? `M-${rest}` : rest} without ${
        ctrl && shift ? "Control and Shift" : ctrl ? "Control" : "Shift"
      }`,
      instead: meta ? `the key "M-${rest}"` : `${JSON.stringify(rest)} in text`,
    };
  }
  const code = named === "Space" ? 32 : named === undefined ? rest.charCodeAt(0) : -1;
  if (!shift && (controlCode(code) || (!meta && "26-/".includes(rest) && named === undefined))) {
    return { kind: "sent" };
  }
  let instead: string | null = null;
  if (shift && !ctrl) {
    if (/^[a-z]$/i.test(rest)) {
      instead = meta ? `the key "M-${rest.toUpperCase()}"` : `"${rest.toUpperCase()}" in text`;
    } else if (named !== undefined) instead = `the key "${m}${named === "Tab" ? "BTab" : named}"`;
    else instead = "the character the shifted key types, in text";
  } else if (shift) {
    if (/^[a-z]$/i.test(rest)) instead = `the key "C-${m}${rest.toLowerCase()}"`;
  } else if (named !== undefined && named !== "BSpace" && named !== "BTab") {
    instead = `the key "${m}${named}"`;
  } else if (named === undefined && CONTROL_EQUIVALENTS[rest] !== undefined) {
    const key = CONTROL_EQUIVALENTS[rest];
    instead = `the key "${meta ? withMeta(key) : key}"`;
  }
  return {
    // With extended keys, tmux 3.3a numbers BTab and keypad keys by its own internal codes
    // (CSI 1106343;2u for S-BTab), which no program reads as a key.
    kind: named === "BTab" || named?.startsWith("KP") ? "never" : "extended",
    outcome: ctrl && !meta && !shift ? "send nothing" : `type the text ${name}`,
    instead,
  };
}

/** tmux's verdicts on key names, per runner and server (its lifetime), least recently used first. */
const caches = new WeakMap<TmuxRunner, Map<string, Map<string, boolean>>>();
/** Names whose verdict is kept per server (beyond it the oldest is forgotten). */
const MAX_CACHED = 1_024;
/**
 * Servers whose verdicts are kept: a process that runs for months may be handed many servers
 * (each restart is another), and the least recently asked is forgotten first.
 */
const CACHED_SERVERS = 8;

function cacheFor(runner: TmuxRunner, serverKey: string): Map<string, boolean> {
  let byServer = caches.get(runner);
  if (!byServer) {
    byServer = new Map();
    caches.set(runner, byServer);
  }
  let cache = byServer.get(serverKey);
  if (cache) byServer.delete(serverKey);
  else cache = new Map();
  byServer.set(serverKey, cache);
  while (byServer.size > CACHED_SERVERS) byServer.delete(byServer.keys().next().value as string);
  return cache;
}

/** Asks tmux whether it knows `key`. Throws {@link TmuxError} when tmux itself fails. */
async function askTmux(
  runner: TmuxRunner,
  address: ServerAddress,
  key: string,
  signal?: AbortSignal,
): Promise<boolean> {
  const result = await execFast(
    runner,
    address,
    ["list-keys", "-T", "root", "--", escapeTrailingSemicolon(key)],
    { signal },
  );
  const stderr = result.stderr.trim();
  if (/^invalid key/m.test(stderr)) return false;
  if (result.code === 0 || /^unknown key/m.test(stderr)) return true;
  throw new TmuxError(classifyStderr(stderr), stderr.split("\n")[0] || "list-keys failed", stderr);
}

/**
 * Whether the server's `extended-keys` is `always`: then tmux sends every modified key as CSI u
 * (to each pane made since), whatever the program asked for. Read on each call that needs it,
 * since a person may change it; a tmux without the option has no extended keys.
 */
async function extendedAlways(
  runner: TmuxRunner,
  address: ServerAddress,
  signal?: AbortSignal,
): Promise<boolean> {
  const result = await execFast(runner, address, ["show-options", "-sv", "extended-keys"], {
    signal,
  });
  return result.code === 0 && new TextDecoder().decode(result.stdout).trim() === "always";
}

/**
 * Checks key names against the tmux at `address`; `serverKey` names that server's lifetime
 * (socket and pid) for the cache. Returns the refused names, in the order given: those tmux
 * does not know, mouse and pseudo keys, and those it cannot send as the key asked for (see
 * {@link keyEncoding}; a key only a program with extended keys gets passes when the server's
 * `extended-keys` is `always`).
 */
export async function refusedKeys(
  runner: TmuxRunner,
  address: ServerAddress,
  serverKey: string,
  keys: readonly string[],
  signal?: AbortSignal,
): Promise<KeyRefusal[]> {
  const cache = cacheFor(runner, serverKey);
  const unique = [...new Set(keys)];
  const shapeless = (k: string) => k === "" || k.length > MAX_KEY_NAME || /[\s\p{Cc}]/u.test(k);
  const unknown = unique.filter((k) => !shapeless(k) && !cache.has(k));
  const verdicts = await Promise.all(unknown.map((k) => askTmux(runner, address, k, signal)));
  unknown.forEach((k, i) => {
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
    cache.set(k, verdicts[i]);
  });
  const refusals: KeyRefusal[] = [];
  const unencoded: [string, KeyEncoding & { kind: "extended" | "never" }][] = [];
  for (const key of unique) {
    if (shapeless(key) || cache.get(key) === false) refusals.push({ key, reason: "invalid" });
    else if (UNSENDABLE.test(key)) refusals.push({ key, reason: "unsendable" });
    else {
      const encoding = keyEncoding(key);
      if (encoding.kind !== "sent") unencoded.push([key, encoding]);
    }
  }
  const always = unencoded.some(([, e]) => e.kind === "extended") &&
    await extendedAlways(runner, address, signal);
  for (const [key, e] of unencoded) {
    if (e.kind === "extended" && always) continue;
    const detail = `tmux would ${e.outcome}${
      e.kind === "extended" ? " (a terminal's standard keys have no code for it)" : ""
    }${e.instead ? `; send ${e.instead} instead` : ""}`;
    refusals.push({ key, reason: "unencoded", detail, extended: e.kind === "extended" });
  }
  return refusals.sort((a, b) => unique.indexOf(a.key) - unique.indexOf(b.key));
}

/** Key names written as other programs write them, folded (case, `_`, `-` and spaces dropped). */
const OTHER_NAMES: Readonly<Record<string, string>> = {
  return: "Enter",
  enter: "Enter",
  cr: "Enter",
  newline: "Enter",
  esc: "Escape",
  escape: "Escape",
  backspace: "BSpace",
  bksp: "BSpace",
  bs: "BSpace",
  del: "DC",
  delete: "DC",
  ins: "IC",
  insert: "IC",
  pgup: "PageUp",
  pageup: "PageUp",
  prior: "PageUp",
  pgdn: "PageDown",
  pgdown: "PageDown",
  pagedown: "PageDown",
  next: "PageDown",
  home: "Home",
  end: "End",
  up: "Up",
  down: "Down",
  left: "Left",
  right: "Right",
  arrowup: "Up",
  arrowdown: "Down",
  arrowleft: "Left",
  arrowright: "Right",
  uparrow: "Up",
  downarrow: "Down",
  leftarrow: "Left",
  rightarrow: "Right",
  tab: "Tab",
  space: "Space",
  spacebar: "Space",
};

/** Modifier words as other programs write them, before `-` or `+`. */
const MODIFIER_WORD = /^(ctrl|control|ctl|alt|meta|option|opt|shift|[cmas])\s*[-+]\s*/i;

/**
 * The tmux name of a key written as another program or a person writes it (`Ctrl-C`,
 * `ctrl+alt+x`, `Return`, `Esc`, `Backspace`, `PgUp`, `Shift+Tab`, or the character itself:
 * a newline, a tab, ESC, `\x03`), when it is one tmux sends to a program as that key; else null.
 */
export function tmuxSpelling(name: string): string | null {
  if (name.length > MAX_KEY_NAME) return null;
  const chars = [...name];
  if (chars.length === 1) {
    const code = name.charCodeAt(0);
    const named: Record<string, string> = {
      "\r": "Enter",
      "\n": "Enter",
      "\t": "Tab",
      "\u001b": "Escape",
      "\u007f": "BSpace",
      "\b": "BSpace",
      " ": "Space",
      "\u0000": "C-Space",
    };
    if (named[name] !== undefined) return named[name];
    if (code >= 1 && code <= 26) return `C-${String.fromCharCode(code + 96)}`;
    return null;
  }
  let rest = name;
  let ctrl = false;
  let meta = false;
  let shift = false;
  for (
    let m = MODIFIER_WORD.exec(rest);
    m && rest.length > m[0].length;
    m = MODIFIER_WORD.exec(rest)
  ) {
    const word = m[1].toLowerCase();
    if (word === "shift" || word === "s") shift = true;
    else if (["ctrl", "control", "ctl", "c"].includes(word)) ctrl = true;
    else meta = true;
    rest = rest.slice(m[0].length);
  }
  const folded = rest.toLowerCase().replace(/[_\s-]/g, "");
  let base = OTHER_NAMES[folded] ??
    (/^f(?:[1-9]|1[0-2])$/.test(folded) ? folded.toUpperCase() : null) ??
    // A character of its own: printable ASCII only (a control character, a bidirectional
    // mark or a letter tmux would strip of Control is nothing to suggest).
    (/^[\x21-\x7e]$/.test(rest) ? rest : null);
  if (base === null) return null;
  if (shift && base === "Tab") {
    base = "BTab";
    shift = false;
  } else if (shift && !ctrl && /^[a-z]$/i.test(base)) {
    base = base.toUpperCase();
    shift = false;
  } else if (ctrl && /^[a-z]$/i.test(base)) base = base.toLowerCase();
  const spelt = `${ctrl ? "C-" : ""}${meta ? "M-" : ""}${shift ? "S-" : ""}${base}`;
  return spelt !== name && keyEncoding(spelt).kind === "sent" ? spelt : null;
}

/**
 * The refusal of `refused` (from {@link refusedKeys}, not empty) as one message and a hint:
 * which names tmux does not know, which are mouse or pseudo keys, and for each key tmux cannot
 * send as asked, what would arrive instead and what to send.
 */
export function describeKeyRefusals(
  refused: readonly KeyRefusal[],
): { message: string; hint: string } {
  const named = (keys: readonly KeyRefusal[]) => keys.map((r) => JSON.stringify(r.key)).join(", ");
  const invalid = refused.filter((r) => r.reason === "invalid");
  const unsendable = refused.filter((r) => r.reason === "unsendable");
  const unencoded = refused.filter((r) => r.reason === "unencoded");
  const parts = [];
  if (invalid.length > 0) {
    const many = invalid.length > 1;
    // Names written as another program writes them: tmux's own name for each.
    const spelt = meantPhrase(invalid.map((r) => r.key), tmuxSpelling);
    parts.push(
      `${many ? "Key names" : "Key name"} ${named(invalid)} ${many ? "are" : "is"} not known ` +
        `to tmux (tmux would have typed ${many ? "them" : "it"} as text${
          spelt ? `; ${spelt}` : ""
        })`,
    );
  }
  if (unsendable.length > 0) {
    parts.push(
      `${named(unsendable)} ${
        unsendable.length > 1 ? "are mouse or pseudo keys" : "is a mouse or pseudo key"
      } that a program cannot be sent`,
    );
  }
  for (const r of unencoded) {
    parts.push(`${JSON.stringify(r.key)} cannot reach a program as that key: ${r.detail}`);
  }
  const extended = unencoded.some((r) => r.extended);
  return {
    message: `${parts.join("; ")}. Nothing was sent.`,
    hint:
      (extended
        ? "tmux sends such a key only to a program that turned on extended keys (CSI u), " +
          "which it does not show, or when the server's extended-keys option is always. "
        : "") +
      "Key names look like C-c, Enter, Escape, Tab, BSpace, Space, Up, PageDown, F5, M-x, " +
      "C-M-Left; to type characters, put them in text.",
  };
}
