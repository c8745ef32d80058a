import assert from "node:assert/strict";
import { ReadPace } from "./read_pace.ts";

/** The start times of reads made as soon as the pace lets them, each taking `took` ms. */
function greedy(pace: ReadPace, from: number, count: number, took: number): number[] {
  const starts: number[] = [];
  let at = from;
  for (let i = 0; i < count; i++) {
    starts.push(at);
    at = pace.after(at, at + took);
  }
  return starts;
}

Deno.test("after quiet, a few reads follow one another; under steady output, one per interval", () => {
  const pace = new ReadPace(20, 3);
  const starts = greedy(pace, 1_000, 12, 1);
  // The first reads wait only as long as the last one took.
  assert.deepEqual(starts.slice(0, 3), [1_000, 1_002, 1_004]);
  // Then one per interval: the rate over any long stretch is the interval's.
  const gaps = starts.slice(4).map((s, i) => s - starts[i + 3]);
  for (const gap of gaps) assert.ok(Math.abs(gap - 20) < 1e-9, `gap ${gap}`);
  const span = starts[11] - starts[0];
  assert.ok(span >= (12 - 3) * 20 - 20, `12 reads in ${span} ms`);
});

Deno.test("a quiet spell refills the bucket, up to its size and no more", () => {
  const pace = new ReadPace(20, 3);
  const emptied = greedy(pace, 0, 10, 1);
  const last = emptied[9];
  // Half an interval of quiet after the last read: one read's worth is not back yet.
  const half = pace.after(last + 10, last + 11);
  assert.ok(half > last + 12, `${half}`);
  // A long quiet gives back the whole bucket, and never more than it holds.
  const later = greedy(pace, last + 10_000, 5, 1);
  assert.deepEqual(later.slice(0, 3), [last + 10_000, last + 10_002, last + 10_004]);
  assert.ok(later[3] - later[2] > 2, "the fourth waits for a refill");
});

Deno.test("a read never starts sooner after the last one's end than that read took", () => {
  const pace = new ReadPace(20, 3);
  // A read of 50 ms (a loaded tmux): the next 50 ms after its end, bucket or not.
  assert.equal(pace.after(0, 50), 100);
  const slow = new ReadPace(20, 3);
  const starts = greedy(slow, 0, 6, 30);
  for (let i = 1; i < starts.length; i++) assert.ok(starts[i] - starts[i - 1] >= 60);
});

Deno.test("with a bucket of one, the pace is a plain interval, as before", () => {
  const pace = new ReadPace(20, 1);
  assert.deepEqual(greedy(pace, 0, 4, 1), [0, 20, 40, 60]);
});

Deno.test("output that keeps coming is read less and less often, down to the longest interval; quiet brings the first back", () => {
  const pace = new ReadPace(20, 3, 160);
  const starts = greedy(pace, 0, 200, 1);
  const gapAt = (ms: number) => {
    const i = starts.findIndex((s) => s >= ms);
    return starts[i + 1] - starts[i];
  };
  assert.ok(Math.abs(gapAt(500) - 20) < 1e-6, `${gapAt(500)}`);
  assert.ok(Math.abs(gapAt(1_500) - 40) < 1e-6, `${gapAt(1_500)}`);
  assert.ok(Math.abs(gapAt(2_500) - 80) < 1e-6, `${gapAt(2_500)}`);
  assert.ok(Math.abs(gapAt(5_000) - 160) < 1e-6, `${gapAt(5_000)}`);
  assert.ok(Math.abs(gapAt(20_000) - 160) < 1e-6, "never longer");
  // Twenty seconds of steady output: about 200 reads, not a thousand.
  const inTwenty = starts.filter((s) => s < 20_000).length;
  assert.ok(inTwenty < 230, `${inTwenty} reads`);
  // A quiet spell: the next reads come at once, then one per 20 ms again.
  const last = starts[starts.length - 1];
  const after = greedy(pace, last + 1_000, 6, 1);
  assert.deepEqual(after.slice(0, 3), [last + 1_000, last + 1_002, last + 1_004]);
  assert.ok(Math.abs(after[5] - after[4] - 20) < 1e-6, `${after[5] - after[4]}`);
});
