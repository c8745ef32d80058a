/**
 * The control-mode reader against forged framing, fuzzed. tmux's side is played by a model of
 * what tmux 3.3a sends a control client (checked against the real thing in control_test.ts and
 * tests/framing_test.ts): `%begin/%end/%error <time> <number> <flags>` around each command's
 * raw output, numbers growing server-wide with gaps (other clients' commands), flags 1 for the
 * client's own commands and 0 for hooks run with it, blocks never interleaved, notifications
 * only between blocks and always escaped, and what a hook run for the client prints bare
 * between blocks. Into the raw output it injects what a pane can show:
 * guards with the right and wrong words, `%output` for other panes, fake sentinels.
 */

import assert from "node:assert/strict";
import {
  ControlProtocol,
  type ControlResult,
  ControlUnavailable,
  type PendingCall,
} from "./control_protocol.ts";
import { AnswerPastBound } from "./tmux_error.ts";
import type { Notifications } from "./control_notifications.ts";
import { prng, type Rand } from "../../tests/helpers/prng.ts";
import { waitFor } from "../../tests/helpers/tmux.ts";

const encoder = new TextEncoder();
const text = (b: Uint8Array) => new TextDecoder().decode(b);

/** What a call should answer: its commands' output, as a spawned tmux would give it. */
interface Expected {
  code: number;
  stdout: string;
  stderr: string;
  /** Where each command's output ends in stdout's bytes; -1 for the one that failed. */
  ends: number[];
}

/** tmux's side of one control client, as documented and as 3.3a behaves. */
class ModelTmux {
  readonly #r: Rand;
  /** Whether forged lines may be hostile (name blocks of this connection) or only stale. */
  readonly #hostile: boolean;
  #time = 1_700_000_000;
  #number = 200;
  readonly #attachNumber: number;
  /** Numbers of blocks sent so far. */
  readonly #numbers: number[] = [];
  /** Command lines received and not yet run. */
  readonly #input: string[] = [];
  #partialInput = "";
  /** What tmux sent and the client has not read: lines not yet encoded, then bytes. */
  #unsent: string[] = [];
  #out = new Uint8Array(0);
  /** Output of each `show` key, as asked for. */
  readonly contents = new Map<string, string[]>();
  /** What each command's block really held, forged lines included. */
  readonly emitted = new Map<string, string[]>();
  /** What was really sent as notifications. */
  readonly panes = new Map<string, string>();
  readonly sessions: string[] = [];
  /** Hostile lines injected so far. */
  hostileLines = 0;

  constructor(r: Rand, hostile: boolean) {
    this.#r = r;
    this.#hostile = hostile;
    this.#number += r.int(100);
    this.#attachNumber = this.#number + 1;
    // The attach itself (flags 0, no output a pane chose), then the session the client is in,
    // hooks run for the attach printing around it.
    this.#block([], 0, true, false);
    this.#hookPrints();
    this.#notify("%session-changed $0 main");
    this.#hookPrints();
    this.sessions.push("$0");
  }

  /** The client wrote `text` to tmux's stdin. */
  receive(written: string): void {
    const all = this.#partialInput + written;
    const lines = all.split("\n");
    this.#partialInput = lines.pop()!;
    this.#input.push(...lines);
  }

  get idle(): boolean {
    return this.#input.length === 0 && this.#out.length === 0 && this.#unsent.length === 0;
  }

  get queued(): number {
    return this.#input.length;
  }

  /** Runs the next command line received; returns false when there is none. */
  runNext(): boolean {
    const line = this.#input.shift();
    if (line === undefined) return false;
    for (const command of line.split(" ; ")) {
      const sentinel = /^display-message -p (tmux-mcp-\S+)$/.exec(command);
      let ok = true;
      if (sentinel) {
        // Its output is the nonce, nothing a pane chose.
        this.#block([sentinel[1]], 1, true, false);
      } else {
        const [name, key] = [...command.matchAll(/'([^']*)'/g)].map((m) => m[1]);
        ok = name === "show";
        const lines = ok ? this.contents.get(key)! : [`no such thing: ${key}`];
        this.emitted.set(key, this.#block(lines, 1, ok));
      }
      // Hooks run with this client after a command (after-* hooks): flags 0.
      if (this.#r.chance(0.1)) this.#block(this.#content(), 0);
      this.#hookPrints();
      // A failing command skips the rest of its line.
      if (!ok) break;
    }
    return true;
  }

  /** Something happens on the server meanwhile: a notification or a hook's block. */
  meanwhile(): void {
    const r = this.#r;
    const roll = r.int(10);
    if (roll < 6) {
      const pane = `%${r.int(3)}`;
      const data = this.#bytes();
      this.panes.set(pane, (this.panes.get(pane) ?? "") + data);
      this.#notify(`%output ${pane} ${escapeOutput(data)}`);
    } else if (roll < 7) {
      const session = `$${r.int(3)}`;
      this.sessions.push(session);
      this.#notify(`%session-changed ${session} s${session.slice(1)}`);
    } else if (roll < 8) {
      this.#notify(
        r.chance(0.5) ? `%window-add @${r.int(9)}` : `%layout-change @1 b25f,80x24,0,0,2 * *`,
      );
    } else if (roll < 9) {
      this.#notify(`%client-session-changed /dev/pts/${r.int(9)} $1 s1`);
    } else if (r.chance(0.5)) {
      this.#block(this.#content(), 0);
    } else {
      this.#hookPrints(1);
    }
  }

  /**
   * What a hook run for this client prints, bare between blocks (tmux 3.3a): any text, a
   * value a pane chose among it, but no line starting with `%` (that would be a notification).
   */
  #hookPrints(chance = 0.1): void {
    const r = this.#r;
    if (!r.chance(chance)) return;
    for (let i = 1 + r.int(3); i > 0; i--) {
      const line = r.chance(0.2) ? "" : this.#bytes().replaceAll("\n", " ");
      this.#send(line.startsWith("%") ? `>${line}` : line);
    }
  }

  /** Takes up to `max` bytes of what tmux sent. */
  take(max: number): Uint8Array {
    if (this.#unsent.length > 0) {
      const more = encoder.encode(this.#unsent.join(""));
      this.#unsent = [];
      const out = new Uint8Array(this.#out.length + more.length);
      out.set(this.#out);
      out.set(more, this.#out.length);
      this.#out = out;
    }
    const chunk = this.#out.subarray(0, Math.min(max, this.#out.length));
    this.#out = this.#out.subarray(chunk.length);
    return chunk;
  }

  /** Output lines for a `show` command: what a pane's rows, a path or a buffer could hold. */
  newContent(): string[] {
    return this.#content();
  }

  #send(line: string): void {
    this.#unsent.push(line, "\n");
  }

  #notify(line: string): void {
    // Notifications are queue items too: they use up numbers.
    this.#number += this.#r.int(2);
    this.#send(line);
  }

  /** Sends one block; returns the lines it held, forged ones included. */
  #block(lines: string[], flags: 0 | 1, ok = true, forgeable = true): string[] {
    const r = this.#r;
    if (r.chance(0.05)) this.#time++;
    this.#number += 1 + (r.chance(0.3) ? r.int(20) : 0);
    const id = `${this.#time} ${this.#number} ${flags}`;
    const held: string[] = [];
    const forge = () => this.#hostile && forgeable && r.chance(0.01);
    this.#send(`%begin ${id}`);
    for (const line of lines) {
      if (forge()) held.push(...this.#forge(id));
      held.push(line);
    }
    if (forge()) held.push(...this.#forge(id));
    for (const line of held) this.#send(line);
    this.#send(`%${ok ? "end" : "error"} ${id}`);
    this.#numbers.push(this.#number);
    return held;
  }

  /** Lines a pane learning or guessing this connection's numbers could make tmux print here. */
  #forge(id: string): string[] {
    const r = this.#r;
    const [, number, flags] = id.split(" ").map(Number);
    this.hostileLines++;
    const recent = this.#numbers.length > 0
      ? this.#numbers[this.#numbers.length - 1 - r.int(Math.min(3, this.#numbers.length))]
      : number;
    const n = [number, number + 1 + r.int(5), recent][r.int(3)];
    const guard = ["%end", "%error", "%begin"][r.int(3)];
    const exact = r.chance(0.5);
    const forged = exact
      ? [`${guard === "%begin" ? "%end" : guard} ${id}`]
      : [`${guard} ${this.#time + r.int(2)} ${n} ${r.chance(0.5) ? flags : 1 - flags}`];
    // What follows a forged end is read as notifications and answers, if anything is.
    const after = [
      "%output %1 FORGED\\015\\012",
      "%session-changed $666 evil",
      "%window-add @666",
      `%begin ${this.#time} ${number + 1 + r.int(3)} 1`,
      // The same block again, so that its real end closes it and all looks well.
      `%begin ${id}`,
      // A block far ahead, so that whatever tmux sends next is read as its output.
      `%begin ${this.#time} ${number + 100_000 + r.int(1000)} ${r.int(2)}`,
      `tmux-mcp-${"0".repeat(24)}`,
      "FORGED row",
      `%end ${this.#time} ${number + 1} 1`,
    ];
    for (let i = r.int(5); i > 0; i--) forged.push(after[r.int(after.length)]);
    return forged;
  }

  #content(): string[] {
    const r = this.#r;
    const lines: string[] = [];
    for (let i = r.int(12); i > 0; i--) {
      const roll = r.int(12);
      if (roll < 6) lines.push(this.#bytes().replaceAll("\n", " "));
      else if (roll < 7) lines.push("");
      else if (roll < 10) lines.push(this.#stale());
      else lines.push(["%output %1 FORGED", "%window-add @666", "%exit", "%", "%%"][r.int(5)]);
    }
    return lines;
  }

  /**
   * Framing a pane shows innocently: a `tmux -C` of its own on this server, numbered before
   * this client, or on another server, numbered anything (here: ahead of this one).
   */
  #stale(): string {
    const r = this.#r;
    const n = r.chance(0.7)
      ? 1 + r.int(this.#attachNumber - 1)
      : this.#number + 1_000 + r.int(1_000_000);
    const guard = ["%begin", "%end", "%error"][r.int(3)];
    const tail = ["", " ", " extra", ""][r.int(4)];
    return r.chance(0.8)
      ? `${guard} ${this.#time - r.int(1000)} ${n} ${r.int(2)}${tail}`
      : [`%end`, `%begin`, `%error of ways`, `%end 1 2`, `%begin x y z`][r.int(5)];
  }

  #bytes(): string {
    const r = this.#r;
    const alphabet = ["a", "b", " ", "%", "\\", "\n", "\r", "\t", "\x1b", "日", "🙂", "0", "7"];
    let s = "";
    for (let i = r.int(30); i > 0; i--) s += alphabet[r.int(alphabet.length)];
    return s;
  }
}

/** tmux's `%output` escaping: bytes below space, and backslash, as `\ooo`. */
function escapeOutput(data: string): string {
  let out = "";
  for (const b of encoder.encode(data)) {
    out += b < 0x20 || b === 0x5c ? `\\${b.toString(8).padStart(3, "0")}` : String.fromCharCode(b);
  }
  // Back to a string whose UTF-8 encoding is the original bytes.
  return new TextDecoder().decode(Uint8Array.from(out, (c) => c.charCodeAt(0)));
}

/** What a spawned tmux would answer for these commands: output of those that ran, up to a failure. */
function expectedAnswer(tmux: ModelTmux, keys: string[]): Expected {
  const expected: Expected = { code: 0, stdout: "", stderr: "", ends: [] };
  for (const key of keys) {
    const lines = tmux.emitted.get(key)!.map((l) => `${l}\n`).join("");
    if (tmux.contents.has(key)) {
      expected.stdout += lines;
      expected.ends.push(new TextEncoder().encode(expected.stdout).length);
    } else {
      expected.code = 1;
      expected.stderr = lines;
      expected.ends.push(-1);
      break;
    }
  }
  return expected;
}

/**
 * Whether an answer read under `bound` is dropped: its output grew past the bound, or a failing
 * command's complaint took it past (a block as short as the sentinel's line, `sentinelLine`
 * bytes, may be the sentinel: it counts only once it is known not to be, as a command's output).
 */
function overflows(expected: Expected, bound: number, sentinelLine: number): boolean {
  const out = new TextEncoder().encode(expected.stdout).length;
  const complaint = new TextEncoder().encode(expected.stderr).length;
  return out > bound ||
    (expected.code !== 0 && complaint > sentinelLine && out + complaint > bound);
}

interface Outcome {
  anomaly: string | null;
  refused: string | null;
  settledAll: boolean;
  /** Settled calls sent with a bound: answered whole, and dropped for going past it. */
  boundHeld: number;
  boundDropped: number;
}

/** One connection's life against the model; asserts the property on the way. */
function runOnce(seed: number, hostile: boolean): Outcome & { hostileLines: number } {
  const r = prng(seed);
  const tmux = new ModelTmux(r, hostile);
  const delivered = new Map<string, string>();
  const deliveredBytes = new Map<string, number[]>();
  const sessions: string[] = [];
  let anomaly: string | null = null;
  let refused: string | null = null;
  const protocol = new ControlProtocol({
    write: (t) => tmux.receive(t),
    deliver: (n: Notifications) => {
      assert.equal(anomaly, null, "nothing is delivered after an anomaly");
      for (const [pane, chunks] of n.output) {
        const list = deliveredBytes.get(pane) ?? [];
        for (const c of chunks) list.push(...c);
        deliveredBytes.set(pane, list);
      }
      if (n.sessionId !== null) sessions.push(n.sessionId);
    },
    refused: (reason) => refused = reason,
    anomaly: (reason) => {
      assert.equal(anomaly, null, "one anomaly is reported once");
      anomaly = reason;
    },
  }, { sentinelGapMs: 0 });
  const calls: {
    call: PendingCall;
    keys: string[];
    bound: number;
    result?: ControlResult | Error;
  }[] = [];
  let sent = 0;
  const total = 1 + r.int(8);
  for (let step = 0; step < 10_000 && anomaly === null; step++) {
    const roll = r.int(10);
    if (roll < 2 && sent < total) {
      // A call: one to three commands, some failing.
      const keys: string[] = [];
      const commands: string[] = [];
      for (let i = 1 + r.int(3); i > 0; i--) {
        const key = `k${sent}-${i}`;
        keys.push(key);
        if (r.chance(0.15)) {
          commands.push(`'fail' '${key}'`);
        } else {
          tmux.contents.set(key, tmux.newContent());
          commands.push(`'show' '${key}'`);
        }
      }
      // Some calls carry a bound on their answer, about as large as answers come.
      const bound = r.chance(0.4) ? r.int(600) : Infinity;
      const entry: (typeof calls)[number] = { call: undefined!, keys, bound };
      entry.call = protocol.send(commands.join(" ; "), (result) => {
        assert.equal(entry.result, undefined, "a call is settled once");
        entry.result = result;
      }, bound);
      // A caller that stops waiting: its answer must still be read, then dropped.
      if (r.chance(0.1)) entry.call.settle = null;
      calls.push(entry);
      sent++;
    } else if (roll < 5 && tmux.queued > 0) {
      tmux.runNext();
    } else if (roll < 7 && step < 200) {
      tmux.meanwhile();
    } else {
      const chunk = tmux.take(r.chance(0.2) ? 1 + r.int(4) : 1 + r.int(300));
      if (chunk.length > 0) protocol.push(chunk);
    }
    if (sent === total && tmux.idle && step > 200) break;
  }

  // Nothing forged was delivered: each pane got a prefix of what it wrote (all of it when the
  // stream held), and only sessions tmux named, in order.
  for (const [pane, list] of deliveredBytes) delivered.set(pane, text(Uint8Array.from(list)));
  for (const [pane, got] of delivered) {
    const real = tmux.panes.get(pane) ?? "";
    assert.ok(real.startsWith(got), `seed ${seed}: ${pane} got ${JSON.stringify(got)}`);
    assert.ok(!got.includes("FORGED"), `seed ${seed}`);
  }
  let at = 0;
  for (const s of sessions) {
    at = tmux.sessions.indexOf(s, at);
    assert.ok(at !== -1, `seed ${seed}: session ${s} was never named by tmux`);
  }
  // Nothing forged was settled: every answer given is exactly the call's, or dropped exactly
  // when it went past the call's bound.
  let boundHeld = 0;
  let boundDropped = 0;
  for (const { keys, result, bound, call } of calls) {
    if (result === undefined) continue;
    if (bound !== Infinity) {
      if (overflows(expectedAnswer(tmux, keys), bound, call.nonce.length + 1)) {
        assert.ok(result instanceof AnswerPastBound, `seed ${seed}: ${result}`);
        boundDropped++;
        continue;
      }
      boundHeld++;
    }
    assert.ok(!(result instanceof Error), `seed ${seed}: ${result}`);
    assert.deepEqual(
      {
        code: result.code,
        stdout: text(result.stdout),
        stderr: result.stderr,
        ends: result.ends,
      },
      expectedAnswer(tmux, keys),
      `seed ${seed}`,
    );
  }
  const settledAll = calls.every((c) => c.result !== undefined || c.call.settle === null);
  if (anomaly === null) {
    // The stream held: everything arrived, exactly.
    assert.ok(settledAll, `seed ${seed}: every call answered`);
    assert.equal(protocol.pending, 0, `seed ${seed}`);
    for (const [pane, real] of tmux.panes) {
      assert.equal(delivered.get(pane) ?? "", real, `seed ${seed}: all of ${pane}`);
    }
    assert.equal(sessions.at(-1), tmux.sessions.at(-1), `seed ${seed}`);
  }
  assert.equal(refused, null);
  return { anomaly, refused, settledAll, hostileLines: tmux.hostileLines, boundHeld, boundDropped };
}

Deno.test("fuzz: output a pane chose never frames an answer or forges a notification", () => {
  const base = Date.now() % 1_000_000;
  let anomalies = 0;
  let held = 0;
  for (let i = 0; i < 1_500; i++) {
    const seed = base + i;
    const outcome = runOnce(seed, true);
    if (outcome.anomaly !== null) anomalies++;
    else if (outcome.hostileLines > 0) held++;
  }
  // Both outcomes happen, so neither half of the property holds vacuously.
  assert.ok(anomalies > 100, `${anomalies} runs found forged framing`);
  assert.ok(held > 5, `${held} runs with forged lines read them as output`);
});

Deno.test("fuzz: framing shown innocently (older commands, odd lines) is output, no anomaly", () => {
  const base = Date.now() % 1_000_000;
  let held = 0;
  let dropped = 0;
  for (let i = 0; i < 400; i++) {
    const outcome = runOnce(base + i, false);
    assert.equal(outcome.anomaly, null, `seed ${base + i}: ${outcome.anomaly}`);
    assert.ok(outcome.settledAll);
    held += outcome.boundHeld;
    dropped += outcome.boundDropped;
  }
  // Answers under a bound were both kept and dropped, the connection carrying on after each.
  assert.ok(held > 20 && dropped > 20, `${held} held, ${dropped} dropped`);
});

/** A protocol fed by hand, with predictable nonces (`tmux-mcp-n1`, `-n2`, ...). */
function byHand(
  options: {
    sentinelGapMs?: number;
    maxLineBytes?: number;
    maxAnswerBytes?: number;
    maxHeldBytes?: number;
  } = {},
) {
  const written: string[] = [];
  const delivered: Notifications[] = [];
  const anomalies: string[] = [];
  let n = 0;
  const protocol = new ControlProtocol({
    write: (t) => written.push(t),
    deliver: (d) => delivered.push(d),
    refused: (reason) => anomalies.push(`refused: ${reason}`),
    anomaly: (reason) => anomalies.push(reason),
  }, {
    nonce: () => `tmux-mcp-n${++n}`,
    sentinelGapMs: options.sentinelGapMs ?? 0,
    maxLineBytes: options.maxLineBytes,
    maxAnswerBytes: options.maxAnswerBytes,
    maxHeldBytes: options.maxHeldBytes,
  });
  const feed = (...lines: string[]) =>
    protocol.push(encoder.encode(lines.map((l) => `${l}\n`).join("")));
  const output = () =>
    delivered.flatMap((d) => [...d.output].map(([pane, c]) => `${pane}:${c.map(text).join("")}`));
  // Attached: the attach's block, the session, and the protocol's own sentinel verifying both.
  feed("%begin 1 100 0", "%end 1 100 0", "%session-changed $0 main");
  assert.ok(delivered.every((d) => d.sessionId === null), "the session is held until verified");
  assert.deepEqual(written, ["display-message -p tmux-mcp-n1\n"]);
  feed("%begin 1 101 1", "tmux-mcp-n1", "%end 1 101 1");
  assert.deepEqual(delivered.map((d) => d.sessionId).filter((s) => s !== null), ["$0"]);
  const answers: (ControlResult | Error)[] = [];
  const send = (line: string) => protocol.send(line, (r) => answers.push(r));
  return { protocol, written, delivered, anomalies, feed, output, answers, send };
}

Deno.test("a forged end, then output for another pane: nothing delivered, nothing settled", () => {
  const h = byHand();
  h.send("'capture-pane'");
  h.feed("%begin 1 105 1", "row 1", "%end 1 105 1", "%output %1 FORGED", "%window-add @9");
  h.feed("%begin 1 999999 1", "row 2", "%end 1 105 1", "%begin 1 106 1", "tmux-mcp-n2");
  h.feed("%end 1 106 1", "%output %1 real");
  assert.deepEqual(h.anomalies, ['"%end 1 105 1" inside block 999999']);
  assert.equal(h.answers.length, 0);
  assert.equal(h.output().length, 0);
  assert.deepEqual(h.delivered.flatMap((d) => d.sessionId ?? []), ["$0"], "only the attach's");
});

Deno.test("the same block begun again after a forged end is an anomaly", () => {
  const h = byHand();
  h.send("'capture-pane'");
  h.feed("%begin 1 105 1", "row 1", "%end 1 105 1", "%output %1 FORGED", "%begin 1 105 1");
  assert.deepEqual(h.anomalies, ["block 105 began after block 105"]);
  h.feed("row 2", "%end 1 105 1", "%begin 1 106 1", "tmux-mcp-n2", "%end 1 106 1");
  assert.equal(h.answers.length, 0);
  assert.equal(h.output().length, 0);
});

Deno.test("end and error outside any answer are anomalies", () => {
  for (const stray of ["%end 1 105 1", "%error 1 2 3"]) {
    const h = byHand();
    h.feed("%output %1 a", stray, "%output %1 b");
    assert.equal(h.anomalies.length, 1, JSON.stringify(stray));
    assert.deepEqual(h.output(), ["%1:a"], "what came before was verified already");
  }
});

Deno.test("a plain line outside any answer (a hook's output) is dropped, not an anomaly", () => {
  // tmux 3.3a writes what a hook run for this client prints (client-attached, pane-focus-in)
  // as bare lines between blocks.
  for (const stray of ["hello", "", "row %end 1 105 1", "tmux-mcp-n2"]) {
    const h = byHand();
    const before = h.delivered.length;
    h.feed("%output %1 a", stray, "%output %1 b");
    assert.deepEqual(h.anomalies, [], JSON.stringify(stray));
    assert.deepEqual(h.output(), ["%1:ab"], "only the notifications, in one delivery");
    assert.equal(h.delivered.length, before + 1);
    // The connection carries on: the next call is answered exactly.
    h.send("'x'");
    h.feed("%begin 1 105 1", "out", "%end 1 105 1", stray, "%begin 1 106 1", "tmux-mcp-n2");
    h.feed("%end 1 106 1");
    const [answer] = h.answers as ControlResult[];
    assert.equal(text(answer.stdout), "out\n");
  }
});

Deno.test("hooks printing around the attach do not hold up its handshake", () => {
  const written: string[] = [];
  const delivered: Notifications[] = [];
  const anomalies: string[] = [];
  let n = 0;
  const protocol = new ControlProtocol({
    write: (t) => written.push(t),
    deliver: (d) => delivered.push(d),
    refused: (reason) => anomalies.push(`refused: ${reason}`),
    anomaly: (reason) => anomalies.push(reason),
  }, { nonce: () => `tmux-mcp-n${++n}`, sentinelGapMs: 0 });
  const feed = (...lines: string[]) =>
    protocol.push(encoder.encode(lines.map((l) => `${l}\n`).join("")));
  // As tmux 3.3a sends it with pane-focus-in, client-session-changed and client-attached hooks
  // that each run `display-message -p`.
  feed("%begin 1 279 0", "%end 1 279 0", "pane-focus-in-hook", "%session-changed $0 main");
  feed("client-session-changed-hook", "client-attached-hook");
  assert.deepEqual(written, ["display-message -p tmux-mcp-n1\n"]);
  feed("%begin 1 280 1", "tmux-mcp-n1", "%end 1 280 1");
  assert.deepEqual(anomalies, []);
  assert.deepEqual(delivered.map((d) => d.sessionId).filter((s) => s !== null), ["$0"]);
});

Deno.test("after a forged end, the rest of the answer is dropped and its real end still breaks the stream", () => {
  // Dropping plain lines between blocks opens no way around the real end: whatever a pane
  // makes tmux print after a forged end, tmux's own end of that block follows before any
  // later block, and read outside a block (or inside one begun since) it is an anomaly.
  const cases: string[][] = [
    ["row 2", "%output %1 FORGED", "%session-changed $6 evil", "row 3"],
    // A nonce is 96 random bits: no pane can answer a sentinel (here they are predictable).
    ["row 2", "%begin 1 106 1", "tmux-mcp-guess", "%end 1 106 1", "row 3"],
    ["row 2", "%begin 1 200 0", "row 3"],
    ["", "tmux-mcp-guess", "%layout-change @1 x y z", "%output %1 FORGED"],
  ];
  for (const after of cases) {
    const h = byHand();
    h.send("'capture-pane'");
    h.feed("%begin 1 105 1", "row 1", "%end 1 105 1", ...after, "%end 1 105 1");
    assert.equal(h.anomalies.length, 1, JSON.stringify(after));
    assert.match(h.anomalies[0], /"%end 1 105 1" (outside any answer|inside block)/);
    h.feed("%begin 1 107 1", "tmux-mcp-n2", "%end 1 107 1", "%output %1 real");
    assert.equal(h.answers.length, 0, "nothing settled");
    assert.equal(h.output().length, 0, "nothing delivered");
    assert.deepEqual(h.delivered.flatMap((d) => d.sessionId ?? []), ["$0"], "only the attach's");
  }
});

Deno.test("framing of earlier commands, or another server's, shown in output is output", () => {
  const h = byHand();
  h.send("'capture-pane'");
  const rows = [
    "%begin 1 7 1",
    "%end 1 7 1",
    // A `tmux -C` in a pane, talking to a server that has run more commands than this one.
    "%begin 1700000000 99999 1",
    "%error 1 300 1",
    "%error 1 99 0",
    "%end 1 105",
    "%end 1 105 1 ",
    "%begin x",
    "%exit",
    "%output %1 shown",
  ];
  h.feed("%begin 1 105 1", ...rows, "%end 1 105 1", "%begin 1 106 1", "tmux-mcp-n2");
  assert.equal(h.answers.length, 0, "not before its sentinel has closed");
  h.feed("%end 1 106 1");
  assert.equal(h.anomalies.length, 0);
  const [answer] = h.answers as ControlResult[];
  assert.equal(text(answer.stdout), rows.map((r) => `${r}\n`).join(""));
  assert.equal(h.output().length, 0);
});

Deno.test("a guard naming this block, or one of ours since the last check, is forged", () => {
  for (const forged of ["%end 2 105 1", "%begin 1 105 0", "%error 1 105 0", "%end 1 104 0"]) {
    const h = byHand();
    h.send("'a' ; 'b'");
    h.feed("%begin 1 104 1", "%end 1 104 1", "%begin 1 105 1", "row", forged);
    assert.equal(h.anomalies.length, 1, forged);
  }
});

Deno.test("notifications after a hook's block wait for a sentinel of the protocol's own", () => {
  const h = byHand();
  h.feed("%begin 1 110 0", "hook output", "%end 1 110 0", "%output %1 x", "%output %2 y");
  assert.equal(h.output().length, 0);
  assert.deepEqual(h.written.slice(1), ["display-message -p tmux-mcp-n2\n"], "one sentinel");
  h.feed("%output %1 z", "%begin 1 111 1", "tmux-mcp-n2");
  assert.equal(h.output().length, 0);
  h.feed("%end 1 111 1", "%output %1 !");
  assert.deepEqual(h.output(), ["%1:xz!", "%2:y"], "in order, once verified");
  assert.equal(h.protocol.pending, 0);
});

Deno.test("an answer is settled after the notifications read before it", () => {
  const h = byHand();
  const before = h.delivered.length;
  let deliveredFirst = -1;
  h.protocol.send("'x'", () => deliveredFirst = h.delivered.length);
  h.feed("%begin 1 105 1", "out", "%end 1 105 1", "%output %1 a", "%begin 1 106 1");
  h.feed("tmux-mcp-n2", "%end 1 106 1");
  assert.equal(deliveredFirst, before + 1, "this chunk's notifications, then the answer");
});

Deno.test("a change of windows or panes is passed on at once: it carries no data", () => {
  const h = byHand();
  h.feed("%begin 1 110 0", "hook output", "%end 1 110 0", "%layout-change @1 x y z");
  assert.equal(h.written.length, 1, "no sentinel needed");
  const last = h.delivered.at(-1)!;
  assert.deepEqual([last.output.size, last.changed, last.sessionId], [0, true, null]);
});

Deno.test("a pane's output paused or continued (a respawn's place resets) is passed on at once as 'look again'", () => {
  for (const line of ["%pause %3", "%continue %3"]) {
    const h = byHand();
    const before = h.delivered.length;
    h.feed(line);
    const after = h.delivered.slice(before);
    assert.equal(after.length, 1, line);
    assert.deepEqual([after[0].changed, after[0].topology, after[0].output.size], [true, false, 0]);
  }
});

Deno.test("a pane paused (pause-after) is a gap: its id is delivered once verified, only as % and digits", () => {
  // Verified framing: delivered with its chunk, with the output read before it.
  const h = byHand();
  const before = h.delivered.length;
  h.feed("%output %3 a", "%pause %3", "%pause %4 x", "%pause 5", "%pause %", "%pause %6;x");
  const now = h.delivered.slice(before);
  assert.equal(now.length, 1);
  assert.deepEqual([...now[0].paused], ["%3"], "only a pane id, whole");
  assert.deepEqual(h.output(), ["%3:a"]);
  assert.equal(now[0].changed, true);

  // After a block nobody asked for (a hook's, which may print lines bare), the pane it names is
  // held until a sentinel verified the framing; the "look again" is not.
  const held = byHand();
  const from = held.delivered.length;
  held.feed("%begin 1 110 0", "hook output", "%end 1 110 0", "%pause %7");
  assert.ok(held.delivered.slice(from).every((d) => d.paused.size === 0), "held");
  assert.ok(held.delivered.slice(from).some((d) => d.changed), "'look again' at once");
  held.feed("%begin 1 111 1", "tmux-mcp-n2", "%end 1 111 1");
  assert.deepEqual(held.delivered.slice(from).flatMap((d) => [...d.paused]), ["%7"]);

  // Dropped with everything unverified when the framing breaks.
  const broken = byHand();
  const at = broken.delivered.length;
  broken.feed("%begin 1 110 0", "%end 1 110 0", "%pause %8", "%end 1 110 0");
  assert.equal(broken.anomalies.length, 1);
  assert.ok(broken.delivered.slice(at).every((d) => d.paused.size === 0));
});

Deno.test("%extended-output (a client attached with pause-after) is output like %output", () => {
  const h = byHand();
  h.feed(
    "%extended-output %1 12 : a\\134b : c\\012",
    // Fields tmux may add before the colon are skipped.
    "%extended-output %2 0 more fields : d",
    "%extended-output %2 3 : ",
    // No data after any " : ": not tmux's, dropped.
    "%extended-output %3 12",
    "%extended-output %3 12:x",
  );
  assert.deepEqual(h.anomalies, []);
  assert.deepEqual(h.output(), ["%1:a\\b : c\n", "%2:d"]);
});

Deno.test("a pane's change of mode is passed on at once as a change", () => {
  const h = byHand();
  const before = h.delivered.length;
  h.send("'x'");
  h.feed("%begin 1 105 1", "out", "%end 1 105 1", "%pane-mode-changed %3");
  // The change carries no data (which pane it names is acted on by nothing): it goes out at once.
  const now = h.delivered.slice(before);
  assert.ok(now.some((d) => d.changed));
});

Deno.test("sentinels of the protocol's own are spaced, and a call's sentinel stands in", async () => {
  // The protocol measures the gap with performance.now(): held still here, only its timer ends
  // a gap. A machine too busy to run this test's next line within 30 ms would otherwise see the
  // gap over, and the sentinel sent at once.
  const realNow = performance.now;
  const frozen = performance.now();
  performance.now = () => frozen;
  try {
    const h = byHand({ sentinelGapMs: 30 });
    // The attach's sentinel was just sent: the next one waits its turn.
    h.feed("%begin 1 110 0", "%end 1 110 0", "%output %1 x");
    assert.equal(h.written.length, 1);
    await waitFor(() => h.written.length >= 2, "the deferred sentinel");
    assert.deepEqual(h.written[1], "display-message -p tmux-mcp-n2\n");
    h.feed("%begin 1 111 1", "tmux-mcp-n2", "%end 1 111 1");
    assert.deepEqual(h.output(), ["%1:x"]);
    // Deferred again, then overtaken by a call: only the call is sent.
    h.feed("%begin 1 112 0", "%end 1 112 0", "%output %1 y");
    h.send("'x'");
    assert.deepEqual(h.written.slice(2), ["'x'\ndisplay-message -p tmux-mcp-n3\n"]);
    h.feed("%begin 1 113 1", "%end 1 113 1", "%begin 1 114 1", "tmux-mcp-n3", "%end 1 114 1");
    assert.deepEqual(h.output(), ["%1:x", "%1:y"]);
    assert.equal(h.protocol.pending, 0);
  } finally {
    performance.now = realNow;
  }
});

Deno.test("an anomaly's reason shows what a pane printed without its control bytes", () => {
  const h = byHand();
  h.feed("%end \x1b]0;owned\x07 1 1", "%output %1 x");
  assert.deepEqual(h.anomalies, ['"%end \\x1b]0;owned\\x07 1 1" outside any answer']);
});

Deno.test("other clients attaching, moving or leaving are passed on as 'look again', nothing else", () => {
  for (const line of ["%client-detached /dev/pts/3", "%client-session-changed client-9 $1 x"]) {
    const h = byHand();
    const before = h.delivered.length;
    h.feed(line);
    const after = h.delivered.slice(before);
    assert.equal(after.length, 1, line);
    assert.equal(after[0].clients, true, line);
    assert.equal(after[0].topology, false, line);
    assert.equal(after[0].changed, false, line);
  }
  // Inside an answer, the same text is output, not a notification.
  const h = byHand();
  h.send("'capture-pane'");
  const before = h.delivered.length;
  h.feed("%begin 1 105 1", "%client-detached /dev/pts/3", "%end 1 105 1");
  assert.ok(h.delivered.slice(before).every((d) => !d.clients));
});

Deno.test("a line that comes in many chunks without a line end arrives whole and exact", () => {
  const h = byHand();
  h.send("'capture-pane'");
  h.feed("%begin 1 105 1");
  // 4 MB in 64 KiB chunks with no line end between them, then the end of line and of answer;
  // each chunk's buffer is reused by the reader, as a stream's would be.
  const chunk = new Uint8Array(65_536);
  for (let i = 0; i < 64; i++) {
    chunk.fill(0x61 + (i % 26));
    h.protocol.push(chunk);
  }
  h.feed("", "%end 1 105 1", "%begin 1 106 1", "tmux-mcp-n2", "%end 1 106 1");
  assert.deepEqual(h.anomalies, []);
  const answer = h.answers[0];
  assert.ok(!(answer instanceof Error) && answer !== undefined);
  const out = answer.stdout;
  assert.equal(out.length, 64 * 65_536 + 1);
  for (let i = 0; i < 64; i++) assert.equal(out[i * 65_536 + 100], 0x61 + (i % 26), `chunk ${i}`);
  assert.equal(out[out.length - 1], 0x0a);
});

Deno.test("an endless line, or an endless answer, breaks the stream instead of filling memory", () => {
  // A line that never ends: past the bound the stream is broken (the connection is retired
  // and its calls fall back), not held whole until memory runs out.
  const h = byHand({ maxLineBytes: 1024 * 1024 });
  h.send("'list-panes'");
  const chunk = new Uint8Array(65_536).fill(0x41);
  for (let i = 0; i < 15; i++) h.protocol.push(chunk);
  assert.deepEqual(h.anomalies, [], "within the bound, still a line");
  for (let i = 0; i < 2; i++) h.protocol.push(chunk);
  assert.deepEqual(h.anomalies, ["a line longer than 1048576 bytes"]);
  assert.equal(h.protocol.broken, "a line longer than 1048576 bytes");
  // The same before any block, as a hostile `tmux -C` would send from its first byte.
  const early = byHand({ maxLineBytes: 1024 * 1024 });
  for (let i = 0; i < 17; i++) early.protocol.push(chunk);
  assert.equal(early.protocol.broken, "a line longer than 1048576 bytes");

  // An answer of endless short lines: broken past its own bound.
  const a = byHand({ maxAnswerBytes: 1024 * 1024 });
  a.send("'list-panes'");
  a.feed("%begin 1 105 1");
  const lines = new TextEncoder().encode("AAAAAAAAAAAAAAA\n".repeat(4096));
  for (let i = 0; i < 17 && a.anomalies.length === 0; i++) a.protocol.push(lines);
  assert.deepEqual(a.anomalies, ["an answer larger than 1048576 bytes"]);
  assert.ok(a.answers[0] instanceof Error || a.answers.length === 0);
});

Deno.test("output held for a check that never answers breaks the stream instead of filling memory", () => {
  // A block nobody asked for (a hook's), then output without end while the protocol's own check
  // goes unanswered (a hostile host's fake tmux, or one whose commands a hook's job holds up):
  // past the bound the stream is broken, not held until memory runs out.
  const h = byHand({ maxHeldBytes: 64 * 1024 });
  h.feed("%begin 1 110 0", "%end 1 110 0");
  const line = `%output %1 ${"A".repeat(1023)}`;
  for (let i = 0; i < 63; i++) h.feed(line);
  assert.deepEqual(h.anomalies, [], "within the bound, held");
  assert.equal(h.output().length, 0, "nothing delivered unverified");
  for (let i = 0; i < 2; i++) h.feed(line);
  assert.deepEqual(h.anomalies, [
    "more than 65536 bytes of output held for a check tmux has not answered",
  ]);
  assert.equal(h.output().length, 0);
  // Verified in time, the same amount passes and the count starts again.
  const v = byHand({ maxHeldBytes: 64 * 1024 });
  for (let round = 0; round < 3; round++) {
    v.feed(`%begin 1 ${120 + 2 * round} 0`, `%end 1 ${120 + 2 * round} 0`);
    for (let i = 0; i < 60; i++) v.feed(line);
    const nonce = v.written.at(-1)!.trim().split(" ").at(-1)!;
    v.feed(`%begin 1 ${121 + 2 * round} 1`, nonce, `%end 1 ${121 + 2 * round} 1`);
  }
  assert.deepEqual(v.anomalies, []);
  assert.equal(v.output().length, 3);
});

Deno.test("an answer past its call's bound is read to its end holding nothing, and the connection carries on", () => {
  const h = byHand();
  const bounded = (line: string, bound: number) =>
    h.protocol.send(line, (r) => h.answers.push(r), bound);
  // Nothing printed under a bound of nothing: the sentinel's line is no output.
  bounded("'x'", 0);
  h.feed("%begin 1 105 1", "%end 1 105 1", "%begin 1 106 1", "tmux-mcp-n2", "%end 1 106 1");
  assert.equal(text((h.answers[0] as ControlResult).stdout), "");
  // Past it: dropped, the rows a pane printed still read for framing.
  bounded("'capture-pane' ; 'capture-pane'", 20);
  h.feed("%begin 1 107 1", "row 1", "row 2", "%end 1 107 1", "%begin 1 108 1");
  h.feed(...Array.from({ length: 1000 }, (_, i) => `row ${i} ${"x".repeat(200)}`));
  h.feed("%end 1 3 1", "%end 1 108 1", "%begin 1 109 1", "tmux-mcp-n3", "%end 1 109 1");
  assert.ok(h.answers[1] instanceof AnswerPastBound, String(h.answers[1]));
  assert.match((h.answers[1] as Error).message, /larger than 20 bytes/);
  // A short last command's output takes it past: dropped too, though that block may have
  // been the sentinel until it ended.
  bounded("'x' ; 'y'", 10);
  h.feed("%begin 1 110 1", "12345678", "%end 1 110 1", "%begin 1 111 1", "abc", "%end 1 111 1");
  h.feed("%begin 1 112 1", "tmux-mcp-n4", "%end 1 112 1");
  assert.ok(h.answers[2] instanceof AnswerPastBound, String(h.answers[2]));
  // The next call is answered exactly.
  h.send("'x'");
  h.feed("%begin 1 113 1", "out", "%end 1 113 1", "%begin 1 114 1", "tmux-mcp-n5", "%end 1 114 1");
  assert.equal(text((h.answers[3] as ControlResult).stdout), "out\n");
  assert.deepEqual(h.anomalies, []);

  // Framing forged in the part dropped is still found: the block's end shown by the pane ends
  // it, so the real one comes outside any answer; a later block of ours named inside breaks it.
  const f = byHand();
  f.protocol.send("'capture-pane'", (r) => f.answers.push(r), 8);
  f.feed("%begin 1 105 1", "a long first row", "%end 1 105 1", "%output %1 FORGED");
  f.feed("more rows", "%end 1 105 1");
  assert.deepEqual(f.anomalies, ['"%end 1 105 1" outside any answer']);
  assert.deepEqual([f.answers.length, f.output().length], [0, 0]);
  const g = byHand();
  g.protocol.send("'capture-pane' ; 'capture-pane'", (r) => g.answers.push(r), 8);
  g.feed("%begin 1 105 1", "a long first row", "%end 1 105 1", "%begin 1 106 1", "%end 1 105 1");
  assert.deepEqual(g.anomalies, ['"%end 1 105 1" inside block 106']);
  assert.equal(g.answers.length, 0);
});

// A hook of a person's prints a whole block bare between ours (tmux 3.3a writes what a hook's
// `display-message -p` prints to the control client used last), flags 1 and a number learnt
// from a control client of its own, while our line waits (an `after-` hook's `run-shell`).

/** `h` sends `line`, declared to answer with `most` blocks (`exact`: a line without branches). */
function sendCounted(
  h: ReturnType<typeof byHand>,
  line: string,
  most: number,
  exact = true,
): void {
  h.protocol.send(line, (r) => h.answers.push(r), Infinity, { most, exact });
}

/** Nothing of `X` settled, and the connection, told of the anomaly, fails the call. */
function refusedForged(h: ReturnType<typeof byHand>, reason: RegExp): void {
  assert.equal(h.anomalies.length, 1, JSON.stringify(h.anomalies));
  assert.match(h.anomalies[0], reason);
  assert.ok(
    h.answers.every((a) => a instanceof Error || !text(a.stdout).includes("X")),
    "never an answer holding the forged block's text",
  );
  // What Connection.retire does on an anomaly: the call fails, as possibly run.
  h.protocol.fail(new ControlUnavailable("retired", { sent: true }));
  assert.equal(h.answers.length, 1);
  assert.ok(h.answers[0] instanceof ControlUnavailable);
}

Deno.test("a bare forged block after our answer, before the sentinel: an anomaly, never our answer", () => {
  const h = byHand();
  sendCounted(h, "'show-environment'", 1);
  h.feed("%begin 1 105 1", "HOME=/home", "%end 1 105 1");
  h.feed("%begin 1 106 0", "%end 1 106 0"); // the after- hook's block, then it waits
  h.feed("%begin 1 107 1", "X", "%end 1 107 1"); // bare, printed by another hook
  h.feed("%begin 1 108 1", "tmux-mcp-n2", "%end 1 108 1");
  refusedForged(h, /more answers than/);
});

Deno.test("a bare forged block before our answer: an anomaly once the real one comes", () => {
  const h = byHand();
  sendCounted(h, "'show-environment'", 1);
  h.feed("%begin 1 105 1", "X", "%end 1 105 1");
  assert.deepEqual(h.anomalies, [], "one block so far, as the line may have");
  h.feed("%begin 1 106 1", "HOME=/home", "%end 1 106 1");
  refusedForged(h, /more answers than/);
});

Deno.test("a forged block in a chain's answer, its sentinel read at once: an anomaly", () => {
  const h = byHand();
  sendCounted(h, "'a' ; 'b'", 2);
  h.feed("%begin 1 105 1", "A", "%end 1 105 1", "%begin 1 106 1", "X", "%end 1 106 1");
  h.feed("%begin 1 107 1", "B", "%end 1 107 1", "%begin 1 108 1", "tmux-mcp-n2", "%end 1 108 1");
  refusedForged(h, /more answers than/);
});

Deno.test("a forged block after a failed command, which ends a line without branches: an anomaly", () => {
  const h = byHand();
  sendCounted(h, "'a' ; 'b'", 2);
  h.feed("%begin 1 105 1", "no such pane", "%error 1 105 1");
  h.feed("%begin 1 106 1", "X", "%end 1 106 1");
  refusedForged(h, /failed/);
});

Deno.test("a forged block before the protocol's own sentinel: an anomaly", () => {
  const h = byHand();
  h.feed("%begin 1 105 0", "%end 1 105 0", "%output %1 a"); // a hook's block: a check is sent
  assert.deepEqual(h.written.slice(1), ["display-message -p tmux-mcp-n2\n"]);
  h.feed("%begin 1 106 1", "X", "%end 1 106 1");
  assert.equal(h.anomalies.length, 1);
  assert.match(h.anomalies[0], /more answers than/);
  assert.deepEqual(h.output(), [], "the held output is dropped");
});

Deno.test("answers within the count pass: branches, failures, a line tmux could not parse", () => {
  const h = byHand();
  // An if-shell whose branch ran two commands, then a command after it.
  sendCounted(h, "'if-shell' '-F' '1' 'a ; b' ; 'c'", 4, false);
  h.feed("%begin 1 105 1", "%end 1 105 1", "%begin 1 106 1", "A", "%end 1 106 1");
  h.feed("%begin 1 107 1", "B", "%end 1 107 1", "%begin 1 108 1", "C", "%end 1 108 1");
  h.feed("%begin 1 109 1", "tmux-mcp-n2", "%end 1 109 1");
  // The branch not taken: fewer.
  sendCounted(h, "'if-shell' '-F' '0' 'a ; b' ; 'c'", 4, false);
  h.feed("%begin 1 110 1", "%end 1 110 1", "%begin 1 111 1", "C", "%end 1 111 1");
  h.feed("%begin 1 112 1", "tmux-mcp-n3", "%end 1 112 1");
  // The first of two fails: the line ends there.
  sendCounted(h, "'a' ; 'b'", 2);
  h.feed("%begin 1 113 1", "no such pane", "%error 1 113 1");
  h.feed("%begin 1 114 1", "tmux-mcp-n4", "%end 1 114 1");
  // A parse error answers once for the whole line.
  sendCounted(h, "'a' ; 'nosuch' ; 'b'", 3);
  h.feed("%begin 1 115 1", "parse error: unknown command: nosuch", "%error 1 115 1");
  h.feed("%begin 1 116 1", "tmux-mcp-n5", "%end 1 116 1");
  assert.deepEqual(h.anomalies, []);
  const [a, b, c, d] = h.answers as ControlResult[];
  assert.equal(text(a.stdout), "A\nB\nC\n");
  assert.deepEqual(a.ends, [0, 2, 4, 6]);
  assert.deepEqual(b.ends, [0, 2]);
  assert.deepEqual([c.code, c.ends], [1, [-1]]);
  assert.equal(d.code, 1);
  assert.match(d.stderr, /^unknown command: nosuch/);
});

Deno.test("a forged block does not hold a stuck call's clock back past its count", () => {
  // Each block of ours that ends moves `answeredAt` (exec's timeout counts from it): a forged
  // one past the count is an anomaly at its end, before it can move the clock again.
  const h = byHand();
  sendCounted(h, "'show-environment'", 1);
  h.feed("%begin 1 105 1", "X", "%end 1 105 1");
  const at = h.protocol.answeredAt;
  h.feed("%begin 1 106 1", "Y", "%end 1 106 1");
  assert.equal(h.anomalies.length, 1);
  assert.equal(h.protocol.answeredAt, at);
});
