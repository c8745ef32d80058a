/**
 * capture_since's cursors: what one remembers of a pane (absolute positions and a hash of each
 * row, never the text), kept in this process, and the short sealed id it travels as.
 *
 * @module
 */

/** History rows a cursor remembers as an anchor to find its position again. */
export const ANCHOR_ROWS = 8;

/** The tallest pane tmux allows (its WINDOW_MAXIMUM: a window is at most 10 000 rows high). */
export const MAX_PANE_ROWS = 10_000;

/**
 * Rows a cursor remembers at most: the anchor and every screen row (see `cursorFor`). The
 * store keeps none with more.
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

/** Why a cursor cannot be used. */
export class CursorError extends Error {
  /** A cursor error with its reason. */
  constructor(message: string) {
    super(message);
    this.name = "CursorError";
  }
}

/**
 * Whether two cursors remember the same: an unchanged poll hands back the cursor it was given
 * rather than a new one that says the same.
 */
export function sameCursor(a: SinceCursor, b: SinceCursor): boolean {
  return a.serverPid === b.serverPid && a.serverStart === b.serverStart &&
    a.paneId === b.paneId && a.panePid === b.panePid && a.width === b.width &&
    a.historyLimit === b.historyLimit && a.historySize === b.historySize && a.base === b.base &&
    a.cursorRow === b.cursorRow && a.rows === b.rows && a.altHash === b.altHash;
}

/**
 * Cursors kept at most. An agent polling a few panes in turn passes back a few, and an unchanged
 * poll keeps its cursor (no new one); one handed out and never passed back stays usable until
 * this many others were handed out or passed back since. About 1 KB each for a 50-row pane.
 */
export const MAX_CURSORS = 1_000;

/**
 * Remembered rows kept at most, over all cursors: 8 bytes of hash each, 4 MB, so that the store
 * holds under 5 MB whatever a client does. A cursor of a 50-row pane remembers 58 rows, so the
 * count bound comes first; this one holds where panes are thousands of rows high (a cursor
 * remembers at most {@link MAX_REMEMBERED_ROWS}: 49 such are kept).
 */
export const MAX_KEPT_ROWS = 500_000;

/** What a cursor's text starts with (`tmc1.` and `tmc2.` carried the whole cursor). */
const CURSOR_PREFIX = "tmc3.";

/** Characters of a cursor's seal: 96 bits of HMAC-SHA-256, base64url. */
const SEAL_CHARS = 16;

/** A cursor's text: the prefix, its serial number in base 36, and the seal of both. */
const CURSOR_TEXT = new RegExp(
  `^(${CURSOR_PREFIX.replace(".", "\\.")}[0-9a-z]{1,11})\\.([A-Za-z0-9_-]{${SEAL_CHARS}})$`,
);

/**
 * Where capture_since keeps what its cursors remember, so that a cursor travels as a short id
 * (about 24 characters, whatever the pane's height) rather than as a hash of every row it saw:
 * a model reads it in every reply and copies it into the next call.
 *
 * An id is a serial number sealed with a key made at random when the store is, which never
 * leaves the process: an id that was altered, guessed, or handed out by another process (or
 * this server before a restart) is refused as not sealed here, before the store is looked at.
 * A sealed id whose cursor was dropped (least recently used, beyond {@link MAX_CURSORS}
 * cursors or {@link MAX_KEPT_ROWS} rows) is refused as expired. A cursor may be passed back
 * more than once, as an earlier point to read from: what it remembers never changes. Which
 * pane and server it belongs to is in what it remembers, and checked by the callers.
 */
export class CursorStore {
  readonly #maxCursors: number;
  readonly #maxRows: number;
  /** By the id without its seal, least recently used first (a Map keeps insertion order). */
  readonly #kept = new Map<string, SinceCursor>();
  #rows = 0;
  #serial = 0;
  #key: Promise<CryptoKey> | null = null;

  /** A store keeping at most `maxCursors` cursors and `maxRows` remembered rows. */
  constructor(maxCursors: number = MAX_CURSORS, maxRows: number = MAX_KEPT_ROWS) {
    this.#maxCursors = maxCursors;
    this.#maxRows = maxRows;
  }

  /** Cursors kept now. */
  get size(): number {
    return this.#kept.size;
  }

  /** Keeps a cursor; returns the id that stands for it. */
  async issue(cursor: SinceCursor): Promise<string> {
    const rows = cursor.rows.length / HASH_CHARS;
    if (rows > MAX_REMEMBERED_ROWS) throw new Error(`a cursor of ${rows} rows`);
    const head = `${CURSOR_PREFIX}${(++this.#serial).toString(36)}`;
    const text = `${head}.${await this.#seal(head)}`;
    this.#kept.set(head, cursor);
    this.#rows += rows;
    for (const [old, kept] of this.#kept) {
      const within = this.#kept.size <= this.#maxCursors && this.#rows <= this.#maxRows;
      if (within || old === head) break;
      this.#drop(old, kept);
    }
    return text;
  }

  /**
   * What the cursor `text` remembers, if this store handed it out and still keeps it (it is
   * then the most recently used). Throws {@link CursorError} saying why not.
   */
  async open(text: string): Promise<SinceCursor> {
    const parts = CURSOR_TEXT.exec(text);
    if (!parts) {
      throw new CursorError("The cursor is malformed: it is not one capture_since returned.");
    }
    const [, head, mark] = parts;
    if (!equalText(mark, await this.#seal(head))) {
      throw new CursorError(
        "The cursor was not sealed by this server process: it was altered or made elsewhere, " +
          "or the server restarted since it was taken.",
      );
    }
    const cursor = this.#kept.get(head);
    if (!cursor) {
      throw new CursorError(
        `The cursor expired: this server process keeps the ${this.#maxCursors} cursors handed out ` +
          `or passed back last, or fewer when their panes are tall (${this.#maxRows} rows ` +
          "remembered in all), and this one is older.",
      );
    }
    this.#kept.delete(head);
    this.#kept.set(head, cursor);
    return cursor;
  }

  #drop(head: string, cursor: SinceCursor): void {
    this.#kept.delete(head);
    this.#rows -= cursor.rows.length / HASH_CHARS;
  }

  async #seal(head: string): Promise<string> {
    this.#key ??= crypto.subtle.importKey(
      "raw",
      crypto.getRandomValues(new Uint8Array(32)),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    const mac = await crypto.subtle.sign("HMAC", await this.#key, new TextEncoder().encode(head));
    return base64url(new Uint8Array(mac).subarray(0, SEAL_CHARS * 6 / 8));
  }
}

/** Whether two short texts are equal, in time that does not tell where they differ. */
function equalText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** The cursors of this process: capture_since hands them out, it and wait_for_text take them. */
export const CURSORS: CursorStore = new CursorStore();

/**
 * What a cursor this process handed out remembers, checked to be one taken on `paneId` (a
 * cursor of another pane would compare rows that were never the same). Throws
 * {@link CursorError} for any other, before any tmux call.
 */
export async function openCursor(text: string, paneId: string): Promise<SinceCursor> {
  const cursor = await CURSORS.open(text);
  if (cursor.paneId !== paneId) {
    throw new CursorError(`The cursor was taken on pane ${cursor.paneId}, not ${paneId}.`);
  }
  return cursor;
}
