/**
 * Markers a program the command ran printed itself (it can read its screen, so it knows the
 * nonce and the end marker's check): a second end marker, anywhere, leaves no exit status to
 * read; a second begin marker neither hides what the command printed before it nor pulls in
 * rows from before the typed line, and the output is said not to be whole. Each case as
 * findMarkers reads the rows whole and as MarkerScan reads them streaming (job_scan.ts), and
 * the reads that stay as they were: one begin and one end, the start scrolled away, an end
 * that fails its check, a progress bar's last line, xtrace.
 */
import assert from "node:assert/strict";
import { endCheck, findMarkers, type Marked, typedNonce } from "./job_markers.ts";
import { MarkerScan } from "./job_scan.ts";
import { typedCommand } from "./typed.ts";

const NONCE = "0123456789abcdef0123";
const OTHER = "fedcba9876543210fedc";
const BEGIN = `__tmcp_${NONCE}_B`;
const TYPED = `$ ${typedCommand("make test", NONCE, "bash")}`;

function end(status: number, nonce = NONCE): string {
  return `__tmcp_${nonce}_E:${status}:${endCheck(nonce, status)}:1765000000`;
}

/**
 * What findMarkers reads in `rows`, checked against MarkerScan: the same whole (a tail the size
 * of the output kept), and the same judgments keeping only a few bytes.
 */
function read(rows: readonly string[], start = 0): Marked {
  const whole = findMarkers(rows, NONCE, start);
  for (const keep of [100_000, 4, 0]) {
    const scan = new MarkerScan(NONCE, start, keep);
    for (const row of rows) scan.row(row);
    const got = scan.finish();
    if (keep === 100_000) {
      assert.deepEqual(got, whole, `MarkerScan, keeping ${keep}`);
      continue;
    }
    for (const key of ["begun", "status", "endedMs", "twoEnds", "twoBegins", "falseEnd"] as const) {
      assert.equal(got[key], whole[key], `MarkerScan, keeping ${keep}: ${key}`);
    }
    assert.ok(whole.output.endsWith(got.output), `MarkerScan, keeping ${keep}: a tail`);
  }
  return whole;
}

Deno.test("findMarkers and MarkerScan: the reads without a forged marker stay as they were", () => {
  // One begin marker, one end.
  const plain = read(["earlier", TYPED, BEGIN, "one", "two", end(3), "$ "], 1);
  assert.deepEqual(plain, {
    begun: true,
    status: 3,
    endedMs: 1_765_000_000_000,
    output: "one\ntwo",
  });
  // The begin marker and the typed line scrolled away (or cleared): the rows from the start.
  const gone = read(["x1", "x2", "x3", end(0), "$ "], 1);
  assert.equal(gone.status, 0);
  assert.equal(gone.startGone, true);
  assert.equal(gone.output, "x2\nx3");
  assert.equal(gone.twoEnds, undefined);
  assert.equal(gone.twoBegins, undefined);
  // An end that fails its check (made on screen): no end, and said why.
  const spliced = read([TYPED, BEGIN, "a", `__tmcp_${NONCE}_E:0:1`, "$ "]);
  assert.equal(spliced.status, null);
  assert.equal(spliced.falseEnd, true);
  assert.equal(spliced.twoEnds, undefined);
  // A false end below the real one changes nothing.
  const below = read([TYPED, BEGIN, "a", end(1), `__tmcp_${NONCE}_E:0`]);
  assert.equal(below.status, 1);
  assert.equal(below.falseEnd, undefined);
  // A progress bar whose last line ends in `\r`: the end marker is on a row of its own; and the
  // end marker after output without a final newline, as typed before.
  const bar = read([TYPED, BEGIN, "▌▋▊▉█ 100% done", end(0), "$ "]);
  assert.equal(bar.output, "▌▋▊▉█ 100% done");
  assert.equal(bar.status, 0);
  const prefixed = read([TYPED, BEGIN, "one", `two${end(0)}`, "$ "]);
  assert.equal(prefixed.output, "one\ntwo");
  // xtrace: the traces of the marker words hold `__tmcp NONCE`, never a marker.
  const xtrace = [
    TYPED,
    `+ printf '\\033\\\\%s_%s_B\\n' __tmcp ${NONCE}`,
    BEGIN,
    "+ make test",
    "built",
    `+ printf '\\033\\\\\\n\\033[2L%s_%s_E:%s:%s:%s\\n' __tmcp ${NONCE} 0 ${endCheck(NONCE, 0)} 1`,
    end(0),
    "$ ",
  ];
  const traced = read(xtrace);
  assert.equal(traced.status, 0);
  assert.equal(traced.output, xtrace.slice(3, 6).join("\n"));
  assert.equal(traced.twoBegins, undefined);
  // Running: no end yet.
  const running = read([TYPED, BEGIN, "one"]);
  assert.deepEqual(running, { begun: true, status: null, endedMs: null, output: "one" });
});

Deno.test("findMarkers and MarkerScan: two valid end markers give no exit status", () => {
  // Finding 1: the program wrote an end for status 0 six rows below its cursor and exited 1;
  // the shell's own end landed above it.
  const forgedBelow = read([
    TYPED,
    BEGIN,
    "build FAILED",
    end(1),
    "$ ",
    "",
    "",
    "",
    end(0),
    "",
  ]);
  assert.equal(forgedBelow.status, null);
  assert.equal(forgedBelow.endedMs, null);
  assert.equal(forgedBelow.twoEnds, true);
  assert.equal(forgedBelow.falseEnd, undefined);
  assert.equal(forgedBelow.begun, true);
  assert.match(forgedBelow.output, /^build FAILED\n/);
  // Printed in its output, above the shell's own: no status either (which is the shell's cannot
  // be told from the rows).
  const forgedAbove = read([TYPED, BEGIN, end(0), "done", end(5), "$ "]);
  assert.equal(forgedAbove.status, null);
  assert.equal(forgedAbove.twoEnds, true);
  // The same status twice is two ends all the same; a false end beside them changes nothing.
  const same = read([TYPED, BEGIN, end(0), end(0), `__tmcp_${NONCE}_E:0:1`]);
  assert.equal(same.status, null);
  assert.equal(same.twoEnds, true);
  assert.equal(same.falseEnd, undefined);
  // Without a begin marker (cleared, or scrolled away) as well.
  const noBegin = read(["x", end(1), "$ ", end(0)], 0);
  assert.equal(noBegin.status, null);
  assert.equal(noBegin.twoEnds, true);
  // Another job's end is not this job's.
  const other = read([TYPED, BEGIN, "a", end(0, OTHER), end(2)]);
  assert.equal(other.status, 2);
  assert.equal(other.twoEnds, undefined);
});

Deno.test("findMarkers and MarkerScan: a second begin marker hides nothing and pulls nothing in", () => {
  // Finding 2: a begin marker printed after output, to hide it.
  const hiding = read([
    "earlier",
    TYPED,
    BEGIN,
    "ERROR: 3 tests FAILED",
    BEGIN,
    "all 120 tests passed",
    end(0),
    "$ ",
  ], 1);
  assert.equal(hiding.status, 0);
  assert.equal(hiding.twoBegins, true);
  assert.equal(hiding.output, `ERROR: 3 tests FAILED\n${BEGIN}\nall 120 tests passed`);
  // Still running, the same.
  const running = read([TYPED, BEGIN, "ERROR", BEGIN, "passed"]);
  assert.equal(running.status, null);
  assert.equal(running.twoBegins, true);
  assert.equal(running.output, `ERROR\n${BEGIN}\npassed`);
  // Written above the typed line (over earlier rows on screen): the rows between stay out.
  const above = read([
    "earlier",
    BEGIN,
    "secret of an earlier command",
    TYPED,
    BEGIN,
    "out",
    end(0),
  ]);
  assert.equal(above.status, 0);
  assert.equal(above.twoBegins, true);
  assert.equal(above.output, "out");
  // Forged above and below, with a typed line of this job's forged above too: the first typed
  // line counts (its echo comes before every marker the command's own output holds).
  const both = read([BEGIN, "earlier", TYPED, BEGIN, "out", TYPED, BEGIN, "hidden?", end(0)]);
  assert.equal(both.output, `out\n${TYPED}\n${BEGIN}\nhidden?`);
  assert.equal(both.twoBegins, true);
  // Without the typed line's echo: the first begin marker at or after the row the job started
  // at; without one there, the first of all.
  const noEcho = ["earlier", BEGIN, "old", BEGIN, "out", BEGIN, "more", end(0)];
  assert.equal(read(noEcho, 3).output, `out\n${BEGIN}\nmore`);
  assert.equal(read(noEcho, 3).twoBegins, true);
  assert.equal(read(noEcho, 9).output, `old\n${BEGIN}\nout\n${BEGIN}\nmore`);
  // A typed line of this job's below every begin marker: the start row says.
  assert.equal(read([BEGIN, "a", BEGIN, "b", TYPED, end(0)], 2).output, `b\n${TYPED}`);
  // A program that printed its pane (`tmux capture-pane -p`), markers and all: the whole of
  // it, the status kept, the output not said to be whole.
  const copy = read([TYPED, BEGIN, "$ tmux capture-pane -p", TYPED, BEGIN, end(0), "$ "]);
  assert.equal(copy.status, 0);
  assert.equal(copy.output, `$ tmux capture-pane -p\n${TYPED}\n${BEGIN}`);
  assert.equal(copy.twoBegins, true);
  // Two begins and two ends: no status, and all of the output.
  const all = read([TYPED, BEGIN, "ERROR", BEGIN, "ok", end(0), end(1), "$ "]);
  assert.equal(all.status, null);
  assert.equal(all.twoEnds, true);
  assert.equal(all.twoBegins, true);
  assert.match(all.output, /^ERROR\n/);
});

Deno.test("findMarkers and MarkerScan: a job without its end is cut at the next run_command below its first begin marker", () => {
  const next = [
    `$ ${typedCommand("tmux capture-pane -p", OTHER)}`,
    `__tmcp_${OTHER}_B`,
    // The later command printed the pane, this job's begin marker with it.
    BEGIN,
    "copied",
  ];
  const lost = read([TYPED, BEGIN, "one", "^C", ...next]);
  assert.equal(lost.status, null);
  assert.equal(lost.twoBegins, true);
  assert.equal(lost.beforeNext, "one\n^C");
  // A begin marker forged in its output does not push the search for the next line past it.
  const forged = read([TYPED, BEGIN, "one", BEGIN, "two", ...next]);
  assert.equal(forged.beforeNext, `one\n${BEGIN}\ntwo`);
  // A next line above the begin marker taken (a forged one above the typed line): nothing.
  const above = read([BEGIN, "x", ...next.slice(0, 2), TYPED, BEGIN, "one"]);
  assert.equal(above.beforeNext, "");
});

Deno.test("findMarkers and MarkerScan: an end marker the terminal upper-cased (stty olcuc) still counts, its check still checked", () => {
  const upper = end(1).toUpperCase();
  assert.equal(read([TYPED, BEGIN, "BUILD FAILED", upper, "$ "]).status, 1);
  // Beside a forged end printed before the command turned olcuc on: two ends, no status.
  const two = read([TYPED, BEGIN, "BUILD FAILED", end(0), upper, "$ "]);
  assert.equal(two.status, null);
  assert.equal(two.twoEnds, true);
  // The numbers are still checked exactly: an upper-cased row with a wrong check is no end.
  const wrong = `__TMCP_${NONCE.toUpperCase()}_E:1:${Number(endCheck(NONCE, 1)) + 1}:1765000000`;
  const forged = read([TYPED, BEGIN, "BUILD FAILED", end(0), wrong, "$ "]);
  assert.equal(forged.status, 0);
  assert.equal(forged.twoEnds, undefined);
  // Another job's nonce, upper-cased, is not this one's.
  assert.equal(read([TYPED, BEGIN, end(1, OTHER).toUpperCase(), "$ "]).status, null);
});

Deno.test("typedNonce: the end marker's words, with the resets before its line feed, are recognised", () => {
  for (const shell of ["sh", "bash", "zsh"]) {
    const line = `$ ${typedCommand("make test", OTHER, shell)}`;
    const reset = String.raw`\033%s\033[r\033%s\033[?7h\033[m\017\033(B\r\n`;
    assert.ok(line.includes(reset), `${shell}: ${line}`);
    assert.equal(typedNonce(line), OTHER, shell);
    // As typed before the end marker reset the attributes and the character set.
    const before = line.replace(reset, String.raw`\033%s\033[r\033%s\033[?7h\r\n`);
    assert.notEqual(before, line);
    assert.equal(typedNonce(before), OTHER, shell);
  }
});
