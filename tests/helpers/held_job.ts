/**
 * A job a person's hook runs (`run-shell`), held until the test lets it end: for the tests of
 * how our control clients live beside such jobs (src/tmux/control_test.ts,
 * src/tmux/control_leave_test.ts).
 *
 * @module
 */

/**
 * A hook job held at a gate: `command` is the hook's `run-shell`, which marks `began`, waits
 * until `open()` (or until the gate is removed), then prints. Its own script, since tmux runs
 * run-shell in the default-shell, whatever that is. `passing`: how many of its first runs end
 * at once instead, unmarked.
 */
export async function heldJob({ passing = 0 }: { passing?: number } = {}): Promise<
  {
    command: string;
    /** The shell command alone. */
    script: string;
    began: () => Promise<boolean>;
    open: () => Promise<void>;
    remove(): Promise<void>;
  }
> {
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-gate-" });
  await Deno.writeTextFile(
    `${dir}/job.sh`,
    'd=$(dirname "$0")\ni=0\nwhile test -d "$d" && ! mkdir "$d/run.$i" 2>/dev/null; do i=$((i + 1)); done\n' +
      `if [ "$i" -ge ${passing} ]; then\n` +
      'touch "$d/began"\nwhile test -d "$d" && ! test -e "$d/open"; do sleep 0.02; done\nfi\n' +
      "echo late greeting\n",
  );
  return {
    command: `run-shell 'sh ${dir}/job.sh'`,
    script: `sh ${dir}/job.sh`,
    began: () => Deno.stat(`${dir}/began`).then(() => true, () => false),
    open: () => Deno.writeTextFile(`${dir}/open`, ""),
    remove: () => Deno.remove(dir, { recursive: true }).catch(() => {}),
  };
}
