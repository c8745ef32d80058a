/**
 * What tmux tells a control client between answers: the notifications a reader delivers once
 * their framing is verified, the set it gathers them in meanwhile, which notification names
 * mean "look again" (a change of windows, panes, sessions or clients), and `%output`'s decoding.
 *
 * @module
 */

/** Notifications whose framing is verified, in the order tmux sent them. */
export interface Notifications {
  /** Bytes each pane wrote (`%output`, decoded), by pane id, in order. */
  readonly output: Map<string, Uint8Array[]>;
  /** Windows, panes or sessions changed: a watched pane may have died, moved or gone. */
  readonly changed: boolean;
  /** The session tmux last said the client is attached to (`%session-changed`), if it did. */
  readonly sessionId: string | null;
  /**
   * Sessions, windows or panes came, went, moved or were renamed (every notification of
   * {@link TOPOLOGY}): like `changed`, only "look again", so it is not held either.
   */
  readonly topology: boolean;
  /**
   * Another client attached, detached or changed sessions (`%client-session-changed`,
   * `%client-detached`): only "look again", so it is not held either.
   */
  readonly clients: boolean;
  /**
   * Windows closed or unlinked from a session (`%window-close`, `%unlinked-window-close`):
   * like `topology`, only "look again" (the window a client's subscriptions hang on may be
   * among them), so it is not held either.
   */
  readonly closedWindows: Set<string>;
  /**
   * Values of this client's format subscriptions (`%subscription-changed`), by name, the last
   * of each: held until verified like output, since a value is what a format made of data.
   */
  readonly subscriptions: Map<string, string>;
  /**
   * How many `%session-window-changed` notices named each session, by session id: what tmux
   * still owes a control client is counted against them (owed_notices.ts), so they are held
   * until verified like output.
   */
  readonly windowChanges: Map<string, number>;
  /**
   * Panes whose output tmux stopped sending this client (`%pause %N`: it fell a second behind
   * under `pause-after`, or a respawn's place reset): what tmux held for it was dropped, a gap in
   * the stream. Held until verified like output, since the id is data a forged line could name;
   * only ids of the form `%` and digits.
   */
  readonly paused: Set<string>;
}

/** Notifications gathered while reading, not yet delivered. */
export class Gathered {
  output = new Map<string, Uint8Array[]>();
  changed = false;
  sessionId: string | null = null;
  topology = false;
  clients = false;
  closedWindows = new Set<string>();
  subscriptions = new Map<string, string>();
  windowChanges = new Map<string, number>();
  paused = new Set<string>();

  get empty(): boolean {
    return this.output.size === 0 && !this.changed && this.sessionId === null &&
      !this.topology && !this.clients && this.closedWindows.size === 0 &&
      this.subscriptions.size === 0 && this.windowChanges.size === 0 && this.paused.size === 0;
  }

  /** Counts a `%session-window-changed` naming `sessionId`. */
  addWindowChange(sessionId: string, count = 1): void {
    this.windowChanges.set(sessionId, (this.windowChanges.get(sessionId) ?? 0) + count);
  }

  addOutput(paneId: string, data: Uint8Array): void {
    const list = this.output.get(paneId);
    if (list) list.push(data);
    else this.output.set(paneId, [data]);
  }

  /** Appends what `later` gathered after this. */
  absorb(later: Gathered): void {
    for (const [paneId, chunks] of later.output) {
      const list = this.output.get(paneId);
      if (list) list.push(...chunks);
      else this.output.set(paneId, chunks);
    }
    this.changed ||= later.changed;
    this.topology ||= later.topology;
    this.clients ||= later.clients;
    for (const id of later.closedWindows) this.closedWindows.add(id);
    if (later.sessionId !== null) this.sessionId = later.sessionId;
    for (const [name, value] of later.subscriptions) this.subscriptions.set(name, value);
    for (const [id, count] of later.windowChanges) this.addWindowChange(id, count);
    for (const id of later.paused) this.paused.add(id);
  }
}

/** Notifications of a change of windows, panes or sessions: a watched pane may have gone. */
export const STRUCTURAL = new Set([
  "%layout-change",
  "%window-add",
  "%window-close",
  "%unlinked-window-add",
  "%unlinked-window-close",
  "%window-pane-changed",
  "%session-window-changed",
  "%sessions-changed",
  "%session-changed",
  "%pane-mode-changed",
]);

/** What changes the shape or the names of the server: windows, panes, sessions. */
export const TOPOLOGY = new Set([
  ...STRUCTURAL,
  "%window-renamed",
  "%unlinked-window-renamed",
  "%session-renamed",
]);

/**
 * `%subscription-changed NAME $S @W I %P ... : VALUE`: tmux writes the value raw (a newline in
 * it would end the line), so a subscription's format must only ever yield safe characters
 * (ids, numbers); the name is ours, a plain word.
 */
export const SUBSCRIPTION = /^%subscription-changed ([A-Za-z0-9_-]+) \S+ \S+ \S+ \S+ : (.*)$/s;

/** `%pause %N`: tmux stopped sending pane `%N`'s output to this client (see `paused`). */
export const PAUSE = /^%pause (%\d{1,10})$/;

/** Decodes the octal escapes (`\ooo`) tmux puts in `%output` for control bytes and `\`. */
export function unescapeOutput(data: Uint8Array): Uint8Array {
  if (!data.includes(0x5c)) return data.slice();
  const out = new Uint8Array(data.length);
  let n = 0;
  for (let i = 0; i < data.length; i++) {
    const b = data[i];
    if (
      b === 0x5c && i + 3 < data.length && isOctal(data[i + 1]) && isOctal(data[i + 2]) &&
      isOctal(data[i + 3])
    ) {
      out[n++] = ((data[i + 1] - 48) << 6) | ((data[i + 2] - 48) << 3) | (data[i + 3] - 48);
      i += 3;
    } else {
      out[n++] = b;
    }
  }
  return out.slice(0, n);
}

function isOctal(b: number | undefined): boolean {
  return b !== undefined && b >= 0x30 && b <= 0x37;
}
