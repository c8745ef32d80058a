/**
 * What a call changes in tmux for a moment, meaning to take it away itself: the global
 * `window-size` a creation lends out to dodge a tmux crash (creating.ts), a transient paste
 * buffer loaded before the guarded step that pastes and deletes it (typing.ts). Interrupted in
 * between — the call cancelled or timed out, the process told to stop or its client gone — the
 * call would leave it changed for good, where a person meets it: their windows sized as they
 * did not choose, their next `prefix ]` pasting the agent's text.
 *
 * So each is registered here with how tmux takes it away. The call clears it when its own step
 * took it away, and undoes it when that step did not answer. The runner's close
 * (a shutdown, before its children are killed) first stops the steps registered here and waits
 * for them, so that none acts after the undo, then undoes whatever is still left, each in a tmux
 * process of its own (the control connections are closing at the same moment, and the step
 * held holds up the control client it went on). On an SSH host that begins as soon as the
 * process knows it is to stop (TmuxRunner.beginClose): such a tmux starts in a new ssh session,
 * after the remote shell's start-up files.
 *
 * @module
 */

import type { TmuxRunner } from "./run.ts";
import { TmuxError } from "./tmux_error.ts";
import { addressKey, type ServerAddress } from "./server_address.ts";

/** At most this many undos that tmux did not answer are kept for the runner's close. */
const MAX_KEPT = 64;

/** Runs one tmux command on the leftover's server: its answer, or a {@link TmuxError}. */
export type UndoRun = (
  args: readonly string[],
) => Promise<{ code: number; stdout: Uint8Array; stderr: string }>;

/** What a call is about to leave, and how it is taken away. */
export interface LeftoverSpec {
  /** Names it on its server: two with the same key are one (one undo does for both). */
  readonly key: string;
  /**
   * Takes it away with the tmux commands it runs through `run`: harmless when it is already
   * gone, and taking away only what is still this server's.
   */
  readonly undo: (run: UndoRun) => Promise<void>;
  /** Whether the undo waits for the structural commands before it (run.ts, inStructureLane). */
  readonly lane?: boolean;
}

/** Something a call changed in tmux and still has to take away (see the module's comment). */
export class Leftover {
  /** The server it is on. */
  readonly address: ServerAddress;
  readonly #spec: LeftoverSpec;
  readonly #owner: RunnerLeftovers;
  readonly #stop = new AbortController();
  readonly #steps = new Set<Promise<unknown>>();

  /** Registered by {@link leave}. */
  constructor(owner: RunnerLeftovers, address: ServerAddress, spec: LeftoverSpec) {
    this.#owner = owner;
    this.address = address;
    this.#spec = spec;
  }

  /** Its key with its server's: one undo does for all that share it. */
  get key(): string {
    return leftoverKey(this.address, this.#spec.key);
  }

  /**
   * Aborts when the runner closes, before the undo runs there: the signal for a step that must
   * not be stopped by the call's own cancellation (which would cut tmux's command line short).
   */
  get signal(): AbortSignal {
    return this.#stop.signal;
  }

  /**
   * Runs a step that makes or takes away the thing, stopped only by {@link signal} (plus
   * whatever `run` adds): the runner's close stops it and waits for it to end before undoing.
   */
  async step<T>(run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const running = run(this.#stop.signal);
    this.#steps.add(running);
    try {
      return await running;
    } finally {
      this.#steps.delete(running);
    }
  }

  /** Taken away as planned, or never made: nothing to undo. */
  clear(): void {
    this.#owner.live.delete(this);
  }

  /**
   * Undoes it now, whatever the call's cancellation: for a step that did not answer. Never
   * throws. When tmux does not answer the undo either, it is kept for the runner's close.
   */
  async undo(): Promise<void> {
    const runner = this.#owner.runner;
    const lane = this.#spec.lane ?? false;
    const run: UndoRun = (args) => runner.exec(this.address, args, { inStructureLane: lane });
    try {
      if (lane) await runner.inStructureLane(this.address, () => this.#spec.undo(run));
      else await this.#spec.undo(run);
    } catch (error) {
      // Not answered: it may still be there. Anything else (no server, no tmux) took it away
      // or leaves nothing to take away.
      if (error instanceof TmuxError && ["timeout", "unreachable"].includes(error.kind)) {
        this.#owner.keep(this);
        return;
      }
    }
    this.clear();
  }

  /** Stops its steps (the runner is closing); resolves once they have ended. */
  async stop(): Promise<void> {
    this.#stop.abort();
    await Promise.allSettled([...this.#steps]);
  }

  /** Undoes it as the runner closes: outside the structure lane (every step was stopped). */
  async undoAtClose(): Promise<void> {
    const runner = this.#owner.runner;
    await this.#spec.undo((args) => runner.exec(this.address, args));
  }
}

/** One runner's leftovers, undone when it closes. */
class RunnerLeftovers {
  readonly runner: TmuxRunner;
  /** Registered and not cleared, in the order they were registered. */
  readonly live = new Set<Leftover>();
  /** Those whose undo tmux did not answer, oldest first. */
  readonly #kept: Leftover[] = [];

  constructor(runner: TmuxRunner) {
    this.runner = runner;
    // On an SSH host the undo's tmux starts in a new session there, after the remote shell's
    // start-up files (a second, for some): begun with the close, before the connection ends.
    runner.onCloseBegins(() => this.#close((l) => l.address.host !== undefined));
    runner.onClose(() => this.#close(() => true));
  }

  /** Keeps `leftover` for the close, within {@link MAX_KEPT}; one per key. */
  keep(leftover: Leftover): void {
    if (this.#kept.some((k) => k.key === leftover.key && k !== leftover)) {
      leftover.clear();
      return;
    }
    this.#kept.push(leftover);
    while (this.#kept.length > MAX_KEPT) this.#kept.shift()!.clear();
  }

  /** Stops the steps of those `which` picks, then undoes them. */
  async #close(which: (leftover: Leftover) => boolean): Promise<void> {
    const live = [...this.live].filter(which);
    for (const l of live) this.live.delete(l);
    this.#kept.splice(0, this.#kept.length, ...this.#kept.filter((l) => !which(l)));
    await Promise.allSettled(live.map((l) => l.stop()));
    const once = new Map(live.map((l) => [l.key, l]));
    await Promise.allSettled([...once.values()].map((l) => l.undoAtClose()));
  }
}

const byRunner = new WeakMap<TmuxRunner, RunnerLeftovers>();

function leftoverKey(address: ServerAddress, key: string): string {
  return `${addressKey(address)}\n${key}`;
}

/**
 * Whether a call under way on `runner` has changed something in tmux it has not given back yet
 * (a person's window-size lent out, say): what its close gives back first.
 */
export function givesBackAtClose(runner: TmuxRunner): boolean {
  return (byRunner.get(runner)?.live.size ?? 0) > 0;
}

/** Registers what a call is about to change on `address` (see {@link LeftoverSpec}). */
export function leave(runner: TmuxRunner, address: ServerAddress, spec: LeftoverSpec): Leftover {
  let owner = byRunner.get(runner);
  if (!owner) byRunner.set(runner, owner = new RunnerLeftovers(runner));
  const leftover = new Leftover(owner, address, spec);
  owner.live.add(leftover);
  return leftover;
}
