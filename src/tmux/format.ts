/**
 * tmux format strings and the parsing of what tmux prints for them.
 *
 * Values can hold any bytes: `pane_current_path` and `pane_current_command` come straight from
 * the system, tabs and newlines included, and `#{q:...}` does not escape them. So records are
 * framed with a random guard chosen per call — no value can forge a separator it cannot
 * predict — and decoded exactly, what is not UTF-8 shown as U+FFFD rather than dropped.
 *
 * @module
 */

const strictDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const lenientDecoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** Random bytes drawn from the system's generator a few kilobytes at a time, used once each. */
const pool = new Uint8Array(4096);
let poolAt = pool.length;
const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

/**
 * `bytes` random bytes as hex: nonces and markers no pane can predict. Every call takes fresh
 * bytes of the cryptographic generator; several calls share one request to it, since a few
 * come with every tool call.
 */
export function randomHex(bytes: number): string {
  if (bytes > pool.length) throw new RangeError(`at most ${pool.length} random bytes at once`);
  if (poolAt + bytes > pool.length) {
    crypto.getRandomValues(pool);
    poolAt = 0;
  }
  let hex = "";
  for (const end = poolAt + bytes; poolAt < end; poolAt++) hex += HEX[pool[poolAt]];
  return hex;
}

/** A per-call random marker that frames records and fields. ASCII, so it never splits a character. */
export function newGuard(): string {
  return `\u0001${randomHex(8)}`;
}

/**
 * Builds a format that prints one framed record: each field expression (e.g. `#{pane_id}`)
 * behind the guard. The guard has no `#`, so it is inert in a format.
 */
export function recordFormat(guard: string, fields: readonly string[]): string {
  return `${guard}R${fields.map((f) => `${guard}F${f}`).join("")}${guard}E`;
}

/**
 * Splits stdout into records of decoded fields. With `fieldCount`, a record that does not have
 * exactly that many fields (impossible unless tmux changed underneath us) throws: never guess.
 */
export function parseRecords(stdout: Uint8Array, guard: string, fieldCount?: number): string[][] {
  // Usually everything is valid UTF-8: decode once and split the text (the guard is ASCII, so
  // it sits at the same places). Otherwise split the bytes and decode field by field.
  let text: string;
  let field: (raw: string) => string;
  try {
    text = strictDecoder.decode(stdout);
    field = (raw) => raw;
  } catch {
    text = latin1(stdout);
    field = decodeLatin1Bytes;
  }
  const records: string[][] = [];
  const start = `${guard}R`;
  const end = `${guard}E`;
  let at = text.indexOf(start);
  while (at !== -1) {
    const close = text.indexOf(end, at + start.length);
    if (close === -1) throw new Error("tmux output ended inside a record");
    const body = text.slice(at + start.length, close);
    const fields = body.split(`${guard}F`).slice(1).map(field);
    if (fieldCount !== undefined && fields.length !== fieldCount) {
      throw new Error(`tmux record has ${fields.length} fields, expected ${fieldCount}`);
    }
    records.push(fields);
    at = text.indexOf(start, close + end.length);
  }
  return records;
}

/** Bytes as a string of one char per byte, so a byte-level search can use string methods. */
function latin1(bytes: Uint8Array): string {
  let out = "";
  const chunk = 0x8000;
  for (let i = 0; i < bytes.length; i += chunk) {
    out += String.fromCharCode(...bytes.subarray(i, i + chunk));
  }
  return out;
}

function decodeLatin1Bytes(s: string): string {
  const bytes = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) bytes[i] = s.charCodeAt(i);
  return decodeBytes(bytes);
}

/**
 * Decodes UTF-8 exactly; what is not UTF-8 becomes U+FFFD, as every UTF-8 decoder shows it
 * (one for each maximal invalid run, the WHATWG rule). Not a spelled-out `\xNN`: that is also
 * text a name can really hold, so the byte 0xFF and the four characters `\xFF` read alike, and
 * the name read back would name the other thing. A name holding U+FFFD names its thing only
 * approximately: tools never give one back to tmux as a path (see {@link UNDECODABLE}).
 */
export function decodeBytes(bytes: Uint8Array): string {
  return lenientDecoder.decode(bytes);
}

/** What a byte that is not UTF-8 reads as (see {@link decodeBytes}). */
export const UNDECODABLE = "\uFFFD";

/**
 * Counts the bytes of a stream (split anywhere) that are no part of a well-formed UTF-8
 * sequence: the bytes {@link decodeBytes} gives as {@link UNDECODABLE} (one for each such byte,
 * or for each sequence cut short).
 */
export class UndecodableCount {
  /** Bytes seen that are not UTF-8. */
  count = 0;
  #carry = new Uint8Array(0);

  /** The next bytes. */
  push(chunk: Uint8Array): void {
    let bytes = chunk;
    if (this.#carry.length > 0) {
      bytes = new Uint8Array(this.#carry.length + chunk.length);
      bytes.set(this.#carry);
      bytes.set(chunk, this.#carry.length);
    }
    this.#carry = new Uint8Array(0);
    let i = 0;
    while (i < bytes.length) {
      const need = sequenceLength(bytes[i]);
      if (need === 0) {
        i++;
        continue;
      }
      if (need < 0) {
        this.count++;
        i++;
        continue;
      }
      if (i + need >= bytes.length) {
        // Perhaps cut by the chunk: judged with the next.
        this.#carry = bytes.slice(i);
        return;
      }
      if (wellFormed(bytes, i, need)) i += need + 1;
      else {
        this.count++;
        i++;
      }
    }
  }

  /** The count once the stream has ended (a sequence cut short at its end counts). */
  finish(): number {
    const rest = this.#carry;
    this.#carry = new Uint8Array(0);
    let i = 0;
    while (i < rest.length) {
      const need = sequenceLength(rest[i]);
      if (need > 0 && i + need < rest.length && wellFormed(rest, i, need)) i += need + 1;
      else {
        if (need !== 0) this.count++;
        i++;
      }
    }
    return this.count;
  }
}

/** Continuation bytes a UTF-8 sequence starting with `c` takes: 0 for ASCII, -1 for none. */
function sequenceLength(c: number): number {
  if (c < 0x80) return 0;
  if (c >= 0xc2 && c <= 0xdf) return 1;
  if (c >= 0xe0 && c <= 0xef) return 2;
  if (c >= 0xf0 && c <= 0xf4) return 3;
  return -1;
}

/** Whether the `need` bytes after `bytes[i]` complete a well-formed sequence. */
function wellFormed(bytes: Uint8Array, i: number, need: number): boolean {
  const c = bytes[i];
  const d = bytes[i + 1];
  if (
    (c === 0xe0 && d < 0xa0) || (c === 0xed && d > 0x9f) || (c === 0xf0 && d < 0x90) ||
    (c === 0xf4 && d > 0x8f)
  ) return false;
  for (let k = 1; k <= need; k++) if ((bytes[i + k] & 0xc0) !== 0x80) return false;
  return true;
}

/**
 * Makes client text inert inside an argument tmux expands as a format (`rename-window`,
 * `new-window -n`, `select-pane -T`, `display-message`, option values): `#` becomes `##`, so
 * `#{...}` is never expanded and `#(...)` never runs.
 */
export function escapeFormat(text: string): string {
  return text.replaceAll("#", "##");
}

/**
 * Text as a literal argument of a format's comparison (`#{==:...,TEXT}`), which tmux expands:
 * `,` and `}` escaped by a `#`, and each `#` doubled, but for a run of them before a `[`, which
 * tmux keeps as it is (a style, `#[fg=red]`, or one escaped, `##[`).
 */
export function formatLiteral(text: string): string {
  return text.replace(
    /(#+)(\[)?|[,}]/g,
    (m, hashes?: string, bracket?: string) =>
      hashes === undefined ? `#${m}` : bracket ? m : `${hashes}${hashes}`,
  );
}

/**
 * Makes an argument safe from tmux's own command parser: a final `;` would end the command
 * (even as its own argv element). tmux drops exactly one backslash before a final `;`, so one
 * is always added, and text that itself ends in `\;` arrives unchanged.
 */
export function escapeTrailingSemicolon(arg: string): string {
  return arg.endsWith(";") ? `${arg.slice(0, -1)}\\;` : arg;
}

/** Commands as one argv for tmux: `;` between them, an argument's own final `;` escaped. */
export function chainArgv(commands: readonly (readonly string[])[]): string[] {
  return commands.flatMap((c, i) => [...(i > 0 ? [";"] : []), ...c.map(escapeTrailingSemicolon)]);
}

/** Parses tmux's `0`/`1` flags; anything else (an empty value from a missing target) is false. */
export function flag(value: string): boolean {
  return value === "1";
}

/** Parses a tmux integer; an empty or malformed value becomes `fallback`. */
export function int(value: string, fallback = 0): number {
  const n = Number.parseInt(value, 10);
  return Number.isFinite(n) ? n : fallback;
}
