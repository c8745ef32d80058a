/**
 * capture_since's cursors: what one remembers of a pane (absolute positions and a hash of each
 * row, never the text), and the opaque text it travels as.
 *
 * @module
 */

/** History rows a cursor remembers as an anchor to find its position again. */
export const ANCHOR_ROWS = 8;

/** The tallest pane tmux allows (its WINDOW_MAXIMUM: a window is at most 10 000 rows high). */
export const MAX_PANE_ROWS = 10_000;

/**
 * Rows a cursor remembers at most: the anchor and every screen row (see `cursorFor`). A cursor
 * holding more was not made here.
 */
export const MAX_REMEMBERED_ROWS = ANCHOR_ROWS + MAX_PANE_ROWS;

/**
 * A 48-bit hash of a row, as 8 base64url characters (cyrb53). Not cryptographic: it tells a
 * rewritten row from an unchanged one, and a collision (about 1 in 2^48) would only hide one
 * rewrite.
 */
export function rowHash(text: string): string {
  return hashText(hashValue(text));
}

/** {@link rowHash} as a number below 2^48 (exact in a double): cheap to keep and compare. */
export function hashValue(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  return finish(h1, h2);
}

function finish(h1: number, h2: number): number {
  const f1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  const f2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(f1 ^ (f1 >>> 13), 3266489909);
  return (f1 >>> 0) * 0x10000 + (f2 & 0xffff);
}

/**
 * The length of the longest start of `text` whose {@link hashValue} is `hash`: where a row
 * that read `t` (hashed) when a cursor was taken and reads `text` now still begins with `t`,
 * that is `t`'s length. -1 when no start of it is `t`. One pass.
 */
export function prefixWithHash(text: string, hash: number): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  let found = finish(h1, h2) === hash ? 0 : -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
    if (finish(h1, h2) === hash) found = i + 1;
  }
  return found;
}

/** The 8-character text of a {@link hashValue}. */
export function hashText(value: number): string {
  const bytes = new Uint8Array(6);
  new DataView(bytes.buffer).setUint32(0, Math.floor(value / 0x10000));
  new DataView(bytes.buffer).setUint16(4, value % 0x10000);
  return base64url(bytes);
}

/** The {@link hashValue} of a hash's text. */
export function parseHash(text: string): number {
  const view = new DataView(fromBase64url(text).buffer);
  return view.getUint32(0) * 0x10000 + view.getUint16(4);
}

/** Characters of a row hash in a cursor. */
export const HASH_CHARS = 8;

function base64url(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function fromBase64url(text: string): Uint8Array {
  const bin = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

/**
 * What a capture_since cursor remembers: whose rows (server, pane, the pane's process), where
 * (absolute positions), and a hash of each remembered row — never the text itself.
 */
export interface SinceCursor {
  readonly serverPid: number;
  /** When that server started (`#{start_time}`): the pid alone may be a successor's. */
  readonly serverStart: number;
  readonly paneId: string;
  readonly panePid: number;
  /** Width when taken: a different width means tmux reflowed the rows. */
  readonly width: number;
  readonly historyLimit: number;
  /** History rows then: rows above this absolute position could not change any more. */
  readonly historySize: number;
  /** Absolute position of the first remembered row. */
  readonly base: number;
  /** Absolute position of the cursor row (rows above it are settled, in a shell). */
  readonly cursorRow: number;
  /** Hashes of the rows from `base`, HASH_CHARS characters each. */
  readonly rows: string;
  /** Hash of the alternate screen when one was shown, else null. */
  readonly altHash: string | null;
}

/** What a cursor starts with; `tmc1.` was the form before the server's start time was in it. */
const CURSOR_PREFIX = "tmc2.";

/** Why a cursor cannot be used. */
export class CursorError extends Error {
  /** A cursor error with its reason. */
  constructor(message: string) {
    super(message);
    this.name = "CursorError";
  }
}

/** Encodes a cursor as opaque text: `tmc1.` + base64url(JSON) + `.` + checksum. */
export function encodeCursor(c: SinceCursor): string {
  const body = JSON.stringify([
    c.serverPid,
    c.serverStart,
    c.paneId,
    c.panePid,
    c.width,
    c.historyLimit,
    c.historySize,
    c.base,
    c.cursorRow,
    c.rows,
    c.altHash,
  ]);
  return `${CURSOR_PREFIX}${base64url(new TextEncoder().encode(body))}.${rowHash(body)}`;
}

/** Characters of a cursor's seal (16 bytes of HMAC-SHA-256, base64url). */
const SEAL_CHARS = 22;

/**
 * The key this process seals cursors with: random, made on first use, never leaves the process.
 * The checksum of a cursor is no secret, so anyone can make a well-formed one; only this
 * process can seal one.
 */
let sealKey: Promise<CryptoKey> | null = null;

async function seal(body: string): Promise<string> {
  sealKey ??= crypto.subtle.importKey(
    "raw",
    crypto.getRandomValues(new Uint8Array(32)),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign("HMAC", await sealKey, new TextEncoder().encode(body));
  return base64url(new Uint8Array(mac).subarray(0, 16));
}

/** A cursor's text with this process's seal after it (capture_since hands out sealed ones). */
export async function sealCursor(text: string): Promise<string> {
  return `${text}.${await seal(text)}`;
}

/**
 * Decodes a cursor that this process sealed: for what a forged cursor must not decide (which
 * text counts as written since). Throws {@link CursorError} for any other.
 */
export async function openSealed(text: string): Promise<SinceCursor> {
  const cursor = decodeCursor(text);
  const at = text.lastIndexOf(".");
  const body = text.slice(0, at);
  const mark = text.slice(at + 1);
  if (body.split(".").length !== 3 || !equalText(mark, await seal(body))) {
    throw new CursorError(
      "The cursor was not sealed by this server process: it was altered or made elsewhere, " +
        "or the server restarted since it was taken.",
    );
  }
  return cursor;
}

/** Whether two short texts are equal, in time that does not tell where they differ. */
function equalText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Decodes a cursor, sealed or not (capture_since reads either: what it answers for a forged
 * one is garbage in, garbage out); throws {@link CursorError} for anything this module did
 * not make.
 */
export function decodeCursor(text: string): SinceCursor {
  const bad = new CursorError("The cursor is malformed: it is not one capture_since returned.");
  if (!text.startsWith(CURSOR_PREFIX)) throw bad;
  const [payload, check, mark, ...rest] = text.slice(CURSOR_PREFIX.length).split(".");
  if (rest.length > 0 || !payload || !check) throw bad;
  if (mark !== undefined && !new RegExp(`^[A-Za-z0-9_-]{${SEAL_CHARS}}$`).test(mark)) throw bad;
  let body: string;
  let v: unknown;
  try {
    body = new TextDecoder("utf-8", { fatal: true }).decode(fromBase64url(payload));
    v = JSON.parse(body);
  } catch {
    throw bad;
  }
  if (rowHash(body) !== check || !Array.isArray(v) || v.length !== 11) throw bad;
  const [
    serverPid,
    serverStart,
    paneId,
    panePid,
    width,
    historyLimit,
    historySize,
    base,
    cursorRow,
    rows,
    alt,
  ] = v;
  const nat = (x: unknown) => Number.isSafeInteger(x) && (x as number) >= 0;
  const ok = nat(serverPid) && nat(serverStart) && typeof paneId === "string" &&
    /^%\d+$/.test(paneId) &&
    nat(panePid) && nat(width) && nat(historyLimit) && nat(historySize) && nat(base) &&
    nat(cursorRow) && typeof rows === "string" && rows.length % HASH_CHARS === 0 &&
    rows.length <= MAX_REMEMBERED_ROWS * HASH_CHARS && /^[A-Za-z0-9_-]*$/.test(rows) &&
    (alt === null || typeof alt === "string");
  if (!ok) throw bad;
  return {
    serverPid,
    serverStart,
    paneId,
    panePid,
    width,
    historyLimit,
    historySize,
    base,
    cursorRow,
    rows,
    altHash: alt,
  };
}
