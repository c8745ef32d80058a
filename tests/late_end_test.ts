/**
 * An end marker a process the command left running writes over the shell's own once the job
 * is over: it can read the nonce and the check's terms on screen, so the row it writes passes
 * the check. The process that ran the job follows it until its end and keeps the end the
 * shell printed (jobs.ts, followJob): a job returned in the background or at its timeout
 * reports the status the shell printed, not the one written over it.
 */

import assert from "node:assert/strict";
import type { JobReply, RunReply } from "./helpers/run_replies.ts";
import { shellPane } from "./helpers/run_replies.ts";
import { connect, type TestClient } from "./helpers/mcp.ts";
import { TestTmux, waitFor } from "./helpers/tmux.ts";

/** Reads the nonce and the check's terms (`a`, `b`) off the pane's screen, as a forger would. */
const READ_TERMS = String.raw`
screen=$(tmux capture-pane -p -J -S - -t "$TMUX_PANE")
nonce=$(printf '%s\n' "$screen" | sed -n 's/^.*__tmcp_\([0-9a-f]\{20\}\)_B$/\1/p' | tail -n 1)
a=$(( 0x$(printf %s "$nonce" | cut -c1-6) >> 2 )); b=$(( 0x$(printf %s "$nonce" | cut -c7-12) >> 2 ))
[ "$a" = "$b" ] && b=$(( b ^ 1 ))
`;

/**
 * Reads the nonce and the check's terms off the screen, waits (bounded) until this job's run
 * mark is given back (its end was seen), then writes a valid end for status 0 over the row
 * above the prompt, the shell's end marker, and says so in the file `$1`.
 */
const LATE_END = String.raw`${READ_TERMS}i=0
while [ -n "$(tmux show-options -pqv -t "$TMUX_PANE" @tmux-mcp-run)" ] && [ "$i" -lt 200 ]; do
  sleep 0.1; i=$((i + 1))
done
printf '\0337\033[1A\r\033[2K__tmcp_%s_E:0:%s:%s\0338' "$nonce" "$(( a ^ b ))" "$(date +%s)"
touch "$1"
`;

/** Runs `command` (which starts the forger writing `done`), then reads its job once forged. */
async function forgedAfterEnd(
  t: TestTmux,
  c: TestClient,
  args: Record<string, unknown>,
  done: string,
  label: string,
): Promise<void> {
  const pane = await shellPane(t, "sh", "sh");
  const run = await c.ok<RunReply>("run_command", { paneId: pane, ...args });
  assert.equal(run.stillRunning, true, `${label}: ${JSON.stringify(run)}`);
  await waitFor(
    () => Deno.stat(done).then(() => true, () => false),
    `${label}: the forger wrote its end`,
    40_000,
  );
  // The forged end is what the pane shows: the only end marker there, and it passes the check.
  const screen = await t.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", pane);
  assert.match(screen, /__tmcp_[0-9a-f]{20}_E:0:/, label);
  assert.doesNotMatch(screen, /__tmcp_[0-9a-f]{20}_E:1:/, label);
  const job = await c.ok<JobReply>("get_command_result", { jobId: run.jobId! });
  assert.equal(job.state, "exited", `${label}: ${JSON.stringify(job)}`);
  assert.equal(job.exitStatus, 1, `${label}: ${JSON.stringify(job)}`);
  assert.match(job.output, /BUILD FAILED/, label);
}

Deno.test("an end marker written over the shell's once the job is over is not believed by the process that ran it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-late-end-" });
  await Deno.writeTextFile(`${dir}/late.sh`, LATE_END);
  const t = await TestTmux.start();
  let c: TestClient | undefined;
  try {
    c = await connect({ socketName: t.socket });
    await forgedAfterEnd(
      t,
      c,
      {
        command: `sh ${dir}/late.sh ${dir}/bg & sleep 0.5; echo BUILD FAILED; false`,
        background: true,
      },
      `${dir}/bg`,
      "background",
    );
    await forgedAfterEnd(
      t,
      c,
      {
        command: `sh ${dir}/late.sh ${dir}/timeout & sleep 2; echo BUILD FAILED; false`,
        timeoutMs: 500,
      },
      `${dir}/timeout`,
      "timed out",
    );
  } finally {
    await c?.close();
    await t.kill();
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * Started in the background by the job's line: reads the nonce and the check's terms, then
 * watches (bounded) the terminal's foreground group in /proc until the shell (its parent) holds
 * it again, and at once writes a valid end for status 0 over the row above the cursor, which is
 * the shell's end marker if it printed it by then; says so in the file `$1`. Faster than any
 * read of the pane that waits for the shell to hold its terminal.
 */
const FAST_END = String.raw`
done_file=$1
${READ_TERMS}sp=$PPID
i=0
while [ "$i" -lt 200000 ]; do
  read -r line < /proc/$sp/stat
  set -- $line
  [ "$8" = "$sp" ] && break
  i=$((i + 1))
done
printf '\033%s\033[1A\r\033[2K__tmcp_%s_E:0:%s:%s\033%s' 7 "$nonce" "$(( a ^ b ))" "$(date +%s)" 8
touch "$done_file"
`;

Deno.test("an end marker written over the shell's the moment it holds its terminal again is never believed", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-fast-end-" });
  await Deno.writeTextFile(`${dir}/fast.sh`, FAST_END);
  const t = await TestTmux.start();
  let c: TestClient | undefined;
  try {
    c = await connect({ socketName: t.socket });
    const ways: [string, Record<string, unknown>][] = [
      ["background", { background: true }],
      ["timed out", { timeoutMs: 300 }],
      ["waited on", { timeoutMs: 20_000 }],
    ];
    for (const [way, options] of ways) {
      for (let round = 0; round < 3; round++) {
        const label = `${way}, round ${round + 1}`;
        const done = `${dir}/${way.replace(" ", "-")}-${round}`;
        const pane = await shellPane(t, "sh", "sh");
        const run = await c.ok<RunReply>("run_command", {
          paneId: pane,
          command: `sh ${dir}/fast.sh ${done} & sleep 1; echo BUILD FAILED; false`,
          ...options,
        });
        assert.notEqual(run.exitStatus, 0, `${label}: ${JSON.stringify(run)}`);
        // Lost for the forged end, never for a shell's end not recognised.
        assert.doesNotMatch(`${JSON.stringify(run)}`, /without the command's end marker/, label);
        await waitFor(
          () => Deno.stat(done).then(() => true, () => false),
          `${label}: the forger wrote its end`,
          40_000,
        );
        if (!run.jobId) continue;
        const job = await c.ok<JobReply>("get_command_result", {
          jobId: run.jobId,
          waitMs: 20_000,
        });
        assert.notEqual(job.state, "running", `${label}: ${JSON.stringify(job)}`);
        assert.notEqual(job.exitStatus, 0, `${label}: ${JSON.stringify(job)}`);
        assert.doesNotMatch(job.lostReason ?? "", /without the command's end marker/, label);
        // The same when read again.
        const again = await c.ok<JobReply>("get_command_result", { jobId: run.jobId });
        assert.notEqual(again.exitStatus, 0, `${label}, again: ${JSON.stringify(again)}`);
      }
    }
  } finally {
    await c?.close();
    await t.kill();
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * Reads the nonce and the check's terms, waits (bounded) until the shell's end marker for a
 * failure is on screen, then writes a valid end for status 0 over it and says so in `$1`.
 */
const SEEN_END = String.raw`
done_file=$1
${READ_TERMS}i=0
while [ "$i" -lt 4000 ]; do
  tmux capture-pane -p -J -t "$TMUX_PANE" | grep -q "__tmcp_$nonce""_E:1:" && break
  i=$((i + 1))
done
printf '\0337\033[1A\r\033[2K__tmcp_%s_E:0:%s:%s\0338' "$nonce" "$(( a ^ b ))" "$(date +%s)"
touch "$done_file"
`;

Deno.test("a job read while the stream its follower hears lags behind the rows waits for the stream", async () => {
  // Rows read over one client show what a program wrote over the shell's end the moment it was
  // printed; the follower hears the shell's over another, behind by the megabytes printed just
  // before it. A get_command_result reading then must not believe the rows alone.
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-lagging-end-" });
  await Deno.writeTextFile(`${dir}/seen.sh`, SEEN_END);
  const t = await TestTmux.start();
  let c: TestClient | undefined;
  try {
    c = await connect({ socketName: t.socket });
    const pane = await shellPane(t, "sh", "sh");
    const done = `${dir}/done`;
    const flood = "head -c 2000000 /dev/zero | tr '\\0' x | fold -w 100";
    const run = await c.ok<RunReply>("run_command", {
      paneId: pane,
      command: `sh ${dir}/seen.sh ${done} & sleep 1; ${flood}; echo BUILD FAILED; false`,
      background: true,
    });
    assert.equal(run.stillRunning, true, JSON.stringify(run));
    await waitFor(() => Deno.stat(done).then(() => true, () => false), "the forger wrote", 40_000);
    const job = await c.ok<JobReply>("get_command_result", { jobId: run.jobId! });
    assert.notEqual(job.exitStatus, 0, JSON.stringify(job).slice(-600));
    assert.notEqual(job.state, "running", JSON.stringify(job).slice(-600));
    const again = await c.ok<JobReply>("get_command_result", { jobId: run.jobId!, waitMs: 5_000 });
    assert.notEqual(again.exitStatus, 0, JSON.stringify(again).slice(-600));
  } finally {
    await c?.close();
    await t.kill();
    await Deno.remove(dir, { recursive: true });
  }
});

/** FAST_END, first turning the pane's output off for every control client (ours among them). */
const UNHEARD_END = FAST_END.replace(
  "sp=$PPID",
  String.raw`for c in $(tmux list-clients -F '#{?client_control_mode,#{client_name},}'); do
  tmux refresh-client -t "$c" -A "$TMUX_PANE:off"
done
sp=$PPID`,
);

/**
 * Runs `sh <script> <done> & sleep <sleep>; echo BUILD FAILED; false` in a fresh sh pane each
 * way (`ways`: the run_command options), waits for the forger to say it wrote, and checks that
 * neither run_command nor get_command_result (read twice) ever says status 0.
 */
async function neverBelieved(
  script: string,
  sleep: string,
  ways: [string, Record<string, unknown>][],
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-forged-end-" });
  await Deno.writeTextFile(`${dir}/forger.sh`, script);
  const t = await TestTmux.start();
  let c: TestClient | undefined;
  try {
    c = await connect({ socketName: t.socket });
    for (const [way, options] of ways) {
      const done = `${dir}/${way.replace(" ", "-")}`;
      const pane = await shellPane(t, "sh", "sh");
      const run = await c.ok<RunReply>("run_command", {
        paneId: pane,
        command: `sh ${dir}/forger.sh ${done} & sleep ${sleep}; echo BUILD FAILED; false`,
        ...options,
      });
      assert.notEqual(run.exitStatus, 0, `${way}: ${JSON.stringify(run)}`);
      await waitFor(() => Deno.stat(done).then(() => true, () => false), `${way}: forged`, 40_000);
      if (!run.jobId) continue;
      for (const read of ["first", "again"]) {
        const job = await c.ok<JobReply>("get_command_result", {
          jobId: run.jobId,
          waitMs: 20_000,
        });
        assert.notEqual(job.exitStatus, 0, `${way}, ${read}: ${JSON.stringify(job)}`);
        assert.notEqual(job.state, "running", `${way}, ${read}: ${JSON.stringify(job)}`);
      }
    }
  } finally {
    await c?.close();
    await t.kill();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("an end marker written over the shell's while the pane's output was kept from this server is never believed", async () => {
  await neverBelieved(UNHEARD_END, "1", [
    ["waited on", { timeoutMs: 20_000 }],
    ["background", { background: true }],
  ]);
});

/**
 * Turns the pane's output off for every control client, waits (bounded) for the shell's end
 * for a failure, writes a valid end for status 0 over it, then detaches every control client:
 * the feed cut, the stream that never carried an end could not vouch for the rows' one.
 */
const CUT_END = String.raw`
done_file=$1
${READ_TERMS}clients() { tmux list-clients -F '#{client_name} #{client_control_mode}' | awk '$2 == 1 { print $1 }'; }
for c in $(clients); do tmux refresh-client -t "$c" -A "$TMUX_PANE:off"; done
i=0
while ! tmux capture-pane -p -t "$TMUX_PANE" | grep -q "__tmcp_$nonce""_E:1:" && [ "$i" -lt 4000 ]; do
  i=$((i + 1))
done
printf '\0337\033[1A\r\033[2K__tmcp_%s_E:0:%s:%s\0338' "$nonce" "$(( a ^ b ))" "$(date +%s)"
for c in $(clients); do tmux detach-client -t "$c"; done
touch "$done_file"
`;

Deno.test("an end marker written over the shell's before this server's feed was cut is never believed", async () => {
  await neverBelieved(CUT_END, "1.5", [
    ["background", { background: true }],
    ["timed out", { timeoutMs: 300 }],
    ["waited on", { timeoutMs: 20_000 }],
  ]);
});

Deno.test("an honest end printed while our watch client leaves for a window moved out of its session is read", async () => {
  // A window moved out of a session makes our client for watches there leave (it would hold the
  // moved panes' output), and the watches attach again through a new client, held here by a
  // person's hook: the job's end comes in between. Given up on our own account, that gap is no
  // cut: the shell's end on screen is read.
  const t = await TestTmux.start();
  let c: TestClient | undefined;
  try {
    await t.tmux("new-session", "-d", "-s", "elsewhere");
    c = await connect({ socketName: t.socket });
    const pane = await shellPane(t, "sh", "sh");
    const other = (await t.tmux("new-window", "-d", "-P", "-F", "#{window_id}", "sh")).trim();
    await t.tmux("set-hook", "-g", "client-attached", "run-shell 'sleep 1'");
    // The command moves the window itself, just before its end: the end comes in the gap.
    const run = await c.ok<RunReply>("run_command", {
      paneId: pane,
      command: `sleep 0.5; tmux move-window -s ${other} -t elsewhere: ; false`,
      background: true,
    });
    assert.equal(run.stillRunning, true, JSON.stringify(run));
    const job = await c.ok<JobReply>("get_command_result", { jobId: run.jobId!, waitMs: 20_000 });
    assert.equal(job.state, "exited", JSON.stringify(job));
    assert.equal(job.exitStatus, 1, JSON.stringify(job));
  } finally {
    await c?.close();
    await t.kill();
  }
});
