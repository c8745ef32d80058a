/**
 * The tmux the tests run, for the tests that pin a fault of tmux 3.3a where it was found: a
 * later tmux that no longer has it is not held to it.
 *
 * @module
 */

/** What `tmux -V` says, read once. */
export const TMUX_VERSION = new TextDecoder().decode(
  (await new Deno.Command("tmux", { args: ["-V"], stdin: "null", stdout: "piped", stderr: "null" })
    .output()).stdout,
).trim();

/** Whether that tmux is 3.3a or older, the releases whose faults the pinned tests pin. */
export const FAULTS_PINNED = /^tmux 3\.[0-3][a-z]?$/.test(TMUX_VERSION);
