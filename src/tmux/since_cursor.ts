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
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (h1 >>> 0) * 0x10000 + (h2 & 0xffff);
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

const CURSOR_PREFIX = "tmc1.";

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

/** Decodes a cursor; throws {@link CursorError} for anything this module did not make. */
export function decodeCursor(text: string): SinceCursor {
  const bad = new CursorError("The cursor is malformed: it is not one capture_since returned.");
  if (!text.startsWith(CURSOR_PREFIX)) throw bad;
  const [payload, check, ...rest] = text.slice(CURSOR_PREFIX.length).split(".");
  if (rest.length > 0 || !payload || !check) throw bad;
  let body: string;
  let v: unknown;
  try {
    body = new TextDecoder("utf-8", { fatal: true }).decode(fromBase64url(payload));
    v = JSON.parse(body);
  } catch {
    throw bad;
  }
  if (rowHash(body) !== check || !Array.isArray(v) || v.length !== 10) throw bad;
  const [serverPid, paneId, panePid, width, historyLimit, historySize, base, cursorRow, rows, alt] =
    v;
  const nat = (x: unknown) => Number.isSafeInteger(x) && (x as number) >= 0;
  const ok = nat(serverPid) && typeof paneId === "string" && /^%\d+$/.test(paneId) &&
    nat(panePid) && nat(width) && nat(historyLimit) && nat(historySize) && nat(base) &&
    nat(cursorRow) && typeof rows === "string" && rows.length % HASH_CHARS === 0 &&
    rows.length <= MAX_REMEMBERED_ROWS * HASH_CHARS && /^[A-Za-z0-9_-]*$/.test(rows) &&
    (alt === null || typeof alt === "string");
  if (!ok) throw bad;
  return {
    serverPid,
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
