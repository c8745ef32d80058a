/**
 * A "recorder" pane: `cat` on a raw terminal into a file, so the file holds exactly the bytes
 * the pane received. The input tests check typing at the byte level against it.
 *
 * @module
 */

import type { TestTmux } from "./tmux.ts";
import { waitFor } from "./tmux.ts";

/** Files recorders wrote, removed by {@link removeRecorders}. */
const recorderFiles: string[] = [];

/**
 * A new window whose pane's terminal is raw and whose every received byte lands in a file.
 * `setup` is printed to the terminal first (e.g. a mode request such as bracketed paste).
 */
export async function recorder(
  t: TestTmux,
  setup = "",
): Promise<{ paneId: string; read: () => Promise<Uint8Array> }> {
  const file = await Deno.makeTempFile({ prefix: "tmux-mcp-recorder-" });
  recorderFiles.push(file);
  const paneId = (await t.tmux(
    "new-window",
    "-d",
    "-P",
    "-F",
    "#{pane_id}",
    `stty raw -echo; printf '${setup}ready'; exec cat > '${file}'`,
  )).trim();
  await waitFor(
    async () => (await t.tmux("capture-pane", "-p", "-t", paneId)).includes("ready"),
    "the recorder to start",
  );
  await waitFor(
    async () =>
      (await t.tmux("display-message", "-p", "-t", paneId, "#{pane_current_command}"))
        .trim() === "cat",
    "cat to run",
  );
  return { paneId, read: () => Deno.readFile(file) };
}

/** Removes the files of every recorder made so far. */
export async function removeRecorders(): Promise<void> {
  for (const file of recorderFiles.splice(0)) await Deno.remove(file).catch(() => {});
}
