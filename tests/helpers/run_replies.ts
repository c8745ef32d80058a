/**
 * What the run_command tests share: the replies as far as they read them, and the POSIX shells
 * installed here that they try.
 *
 * @module
 */

import { type TestTmux, waitFor } from "./tmux.ts";

/** What run_command answers, as far as these tests read it. */
export interface RunReply {
  exitStatus: number | null;
  output: string;
  outputComplete: boolean;
  timedOut: boolean;
  stillRunning: boolean;
  jobId?: string;
}

/** What get_command_result answers, as far as these tests read it. */
export interface JobReply {
  state: string;
  exitStatus: number | null;
  lostReason: string | null;
  output: string;
  outputComplete: boolean;
}

export function installed(name: string): boolean {
  return ["/bin", "/usr/bin"].some((dir) => {
    try {
      return Deno.statSync(`${dir}/${name}`).isFile;
    } catch {
      return false;
    }
  });
}

/**
 * The POSIX shells installed here: how a pane starts each (bash and zsh without start-up
 * files: this machine's own may be slow or print text) and the name tmux gives it.
 */
export const SHELLS: { start: string; name: string }[] = [
  { start: "sh", name: "sh" },
  { start: "bash --norc --noprofile", name: "bash" },
  { start: "zsh -f", name: "zsh" },
  { start: "mksh", name: "mksh" },
  { start: "ksh", name: "ksh" },
  { start: "yash --norcfile", name: "yash" },
  { start: "posh", name: "posh" },
  { start: "busybox sh", name: "busybox" },
].filter((s) => installed(s.start.split(" ")[0]));

/** A new window running `start`, once tmux names it `name` and it has drawn. */
export async function shellPane(t: TestTmux, start: string, name: string): Promise<string> {
  const id = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", start)).trim();
  await waitFor(
    async () =>
      (await t.tmux("display-message", "-p", "-t", id, "#{pane_current_command}")).trim() ===
        name && (await t.tmux("capture-pane", "-p", "-t", id)).trim() !== "",
    `the ${name} prompt`,
  );
  return id;
}
