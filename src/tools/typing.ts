/**
 * What every input tool shares: how a tool that types is annotated, its `force` field, the check
 * that text arrives as given, the characters that would act as keys inside a paste (paste_text's
 * rule, which paste_buffer and load_buffer keep too), and the paste through a transient buffer
 * that paste_text, paste_buffer and run_command type with (guarded as any input, and, for
 * run_command, on the shell holding its terminal).
 *
 * @module
 */

import { z } from "zod";
import { nestedCommandBytes, runIf } from "../mcp/act_step.ts";
import type { TmuxContext } from "../mcp/context.ts";
import { ToolFailure } from "../mcp/errors.ts";
import { deliverInput, type InputGuardOptions, PartialInput } from "../mcp/input_guard.ts";
import type { ToolAnnotations } from "../mcp/tool_spec.ts";
import { execFast } from "../tmux/control.ts";
import { ownClientName, transientBufferName } from "../tmux/left_behind.ts";
import { leave } from "../tmux/leftovers.ts";
import type { PaneRow, Snapshot } from "../tmux/snapshot.ts";
import { shellGuard } from "./shell_guard.ts";

/** Annotations of a tool that types into a pane: it changes the world, and repeating it does too. */
export const TYPES: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: false,
};

/** Whether to type into this server's own pane too (the input guards refuse it otherwise). */
export const forceField = z.boolean().optional();

/**
 * Refuses text tmux would not deliver as given, instead of reporting it sent: tmux ends an
 * argument at a NUL (the rest never arrives), and a lone surrogate has no UTF-8 form (a
 * replacement character would arrive instead).
 */
export function checkDeliverable(what: string, text: string, hint: string): void {
  if (text.includes("\0")) {
    throw new ToolFailure(
      `${what} holds a NUL character; tmux would cut the text there and nothing after it would arrive.`,
      hint,
    );
  }
  if (!text.isWellFormed()) {
    throw new ToolFailure(
      `${what} is not well-formed Unicode (a lone surrogate), so it cannot arrive as given.`,
      hint,
    );
  }
}

/**
 * Characters that act as keys, not text, when they reach a program: C0 controls but tab and
 * newline, DEL, and C1 controls. ESC is the dangerous one (`ESC[201~` ends a bracketed paste
 * early and the rest would arrive as keys); none of them belongs in pasted text (paste_text's
 * rule and paste_buffer's).
 */
// deno-lint-ignore no-control-regex
export const KEY_CHARACTER = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

/** Names a character for a refusal: `ESC (0x1b)`, `C-c (0x03)`, `U+009B`. */
export function nameCharacter(ch: string): string {
  const code = ch.codePointAt(0) ?? 0;
  const hex = `0x${code.toString(16).padStart(2, "0")}`;
  if (code === 0x1b) return `ESC (${hex})`;
  if (code === 0x0a) return `newline (${hex})`;
  if (code === 0x0d) return `carriage return (${hex})`;
  if (code === 0x7f) return `DEL (${hex})`;
  if (code < 0x20) return `C-${String.fromCharCode(code + 0x60)} (${hex})`;
  return `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
}

/**
 * Longest fill (quoted as it travels) sent on the guarded step's own command line: a tmux
 * process refuses a command line over 16 KB (should the control channel be unavailable), and
 * the guard's checks take a few KB more.
 */
const INLINE_FILL_BYTES = 10_240;

/**
 * Whether tmux gives the newest paste buffer to any pane's program that asks for the clipboard
 * (`ESC ] 52 ; c ; ?`): tmux 3.3a answers such a query only with `set-clipboard on`, with the
 * newest buffer of any kind, named ones too. A program in any pane (over ssh or in a container
 * too, which cannot reach tmux's socket) can then read a buffer while it is the newest.
 */
export async function clipboardReadable(ctx: TmuxContext): Promise<boolean> {
  const result = await execFast(
    ctx.runner,
    ctx.address,
    ["show-options", "-sv", "set-clipboard"],
    ctx.readOptions(),
  );
  return result.code === 0 && new TextDecoder().decode(result.stdout).trim() === "on";
}

/**
 * Pastes `text` into `pane` through a transient buffer of this server's own (random name),
 * after `before` (keys that prepare the pane), guarded by {@link deliverInput}: tmux re-checks
 * at the instant of the paste that nobody watches the pane. A person's paste (`prefix ]`,
 * paste-buffer -p) takes the newest buffer of any kind, named ones too: so the buffer is
 * filled on the guarded step's own command line, after its shell conditions (tmux runs other
 * clients' commands while it waits for their job) and right before its last check, and the
 * paste deletes it: it exists only inside that one step, which nothing else interleaves with.
 * A text too long for that line is loaded by a tmux process of its own just before the step
 * (briefly the newest buffer: the one window left), and a refusal deletes it in the step. With
 * `set-clipboard on` such a text is refused ({@link clipboardReadable}): while it was the newest
 * buffer, any pane's program could read it.
 * Either way a refused or failed paste leaves no buffer behind, nor does a process that ends
 * before the step has answered (its close deletes the buffer): between the load and the step,
 * or while a person's hook holds the step's line after the fill. A process killed outright
 * between the load and the step deletes nothing: the loaded buffer's name says whose it is
 * (this process's control client, left_behind.ts), and the next tmux-mcp process there
 * deletes it once that client is gone. Returns the panes reached.
 */
export async function pasteTransient(
  ctx: TmuxContext,
  snapshot: Snapshot,
  pane: PaneRow,
  text: string,
  options: {
    readonly guard: InputGuardOptions;
    /** `-p`: brackets the paste when the program asked for bracketed paste. */
    readonly bracketed: boolean;
    /** `-r`: newlines arrive as newlines (by default as carriage returns, as a person's). */
    readonly keepNewlines?: boolean;
    readonly enter?: boolean;
    readonly before?: readonly (readonly string[])[];
  },
): Promise<string[]> {
  const inline = nestedCommandBytes(["set-buffer", "-b", transientBufferName(null), "--", text]) <=
    INLINE_FILL_BYTES;
  if (!inline && await clipboardReadable(ctx)) {
    throw new ToolFailure(
      `Nothing was pasted into ${pane.id}: a text this long (past ${
        INLINE_FILL_BYTES / 1024
      } KB as tmux quotes it) goes into a paste buffer just before the paste, and with ` +
        "set-clipboard on tmux gives the newest buffer to any program in any pane that asks " +
        "for the clipboard (OSC 52): another pane could read it.",
      `Send it in parts of at most ${
        INLINE_FILL_BYTES / 1024
      } KB (each pastes in one step, its buffer made and deleted within it), or ask the ` +
        "person to set set-clipboard to external.",
    );
  }
  // Loaded before the step, it names its owner: this process's control client, which tmux
  // drops once the process is killed (one round trip more, next to a tmux process started for
  // the load). Filled on the step's line, it is the line's, which tmux has run on after its
  // client was gone; one left anyway goes by its age.
  const name = transientBufferName(
    inline ? null : await ownClientName(ctx.runner, ctx.address, ctx.signal),
  );
  const paste = ["paste-buffer", "-b", name, "-d"];
  if (options.bracketed) paste.push("-p");
  if (options.keepNewlines) paste.push("-r");
  paste.push("-t", pane.id);
  const commands = [...(options.before ?? []), paste];
  if (options.enter) commands.push(["send-keys", "-t", pane.id, "Enter"]);
  const fill = ["set-buffer", "-b", name, "--", text];
  // From its fill until the step that pastes it has answered, it is this server's to delete:
  // also when the process ends in between (leftovers.ts), or the person's next paste would be
  // this text. Filled on the step's own line, it lasts as long as a person's hook after the
  // fill (after-set-buffer) holds that line, which the end of the process cuts short.
  const left = leave(ctx.runner, ctx.address, {
    key: `buffer ${name}`,
    undo: (run) => run(["delete-buffer", "-b", name]).then(() => {}),
  });
  try {
    const reached = await left.step((closing) => {
      // The process's end stops the step as the call's cancellation does: a tmux process of
      // its own is killed (tmux drops the rest of its line), and the close deletes the buffer.
      const step = ctx.orClosing(closing);
      // Loaded only on the server the guards read, which a tmux process of its own may not
      // reach.
      const load = () =>
        runIf(step, [], [["load-buffer", "-b", name, "-"]], [], {
          spawn: { signal: step.signal, stdin: new TextEncoder().encode(text) },
        });
      return deliverInput(
        step,
        snapshot,
        pane,
        options.guard,
        commands,
        inline ? [fill] : [],
        inline ? { name } : { name, load },
      );
    });
    left.clear();
    return reached;
  } catch (error) {
    // Refused by tmux, the step deleted it (filled on that line, a shell condition's refusal
    // left none): a retry loop on such refusals costs no round trip more.
    // Stopped part-way, the step deleted it, or pasted it (-d).
    if (
      options.guard.shellRefusals?.includes(error as ToolFailure) || error instanceof PartialInput
    ) left.clear();
    else await left.undo();
    throw error;
  }
}

/**
 * Pastes `text` into `pane` after `before` (keys that prepare the pane), through a transient
 * buffer ({@link pasteTransient}), guarded as any input: tmux re-checks at the instant of the
 * paste that nobody watches the pane. Returns the panes reached.
 */
export async function pasteViaBuffer(
  ctx: TmuxContext,
  snapshot: Snapshot,
  pane: PaneRow,
  text: string,
  options: {
    enter: boolean;
    keepNewlines: boolean;
    force?: boolean;
    before?: string[][];
    /** The pid that must hold the pane's terminal at the instant of the paste. */
    holds?: number;
    /** What tmux must name the pane's program at the instant of the paste. */
    command?: string;
    /** A claim on the pane the paste needs (see InputGuardOptions). */
    claim?: InputGuardOptions["claim"];
  },
): Promise<string[]> {
  const guard: InputGuardOptions = options.holds === undefined
    ? { force: options.force, paste: true, claim: options.claim }
    : {
      ...shellGuard(pane, options.holds, options.command, options.force),
      paste: true,
      claim: options.claim,
    };
  return await pasteTransient(ctx, snapshot, pane, text, {
    guard,
    bracketed: true,
    keepNewlines: options.keepNewlines,
    enter: options.enter,
    before: options.before,
  });
}
