/**
 * search_panes on a pane that keeps printing: the rows a first read as printed found are read
 * again as shown by their numbers, and a pane at its history limit moves without its history
 * growing (tmux drops its oldest rows as it adds new ones, or trims a tenth at once). A search
 * must give the matches as the pane stood at one read, or say that the pane was not searched
 * and why (it kept printing): never `complete: true` with matches missing, never a history
 * clear that did not happen. A quiet pane at its limit is searched whole, as before.
 */

import assert from "node:assert/strict";
import { type StartedTmux, withTmux } from "./helpers/mcp.ts";
import { waitFor } from "./helpers/tmux.ts";

interface Reply {
  complete: boolean;
  totalMatches: number;
  matches: { paneId: string; lineNumber: number; text: string }[];
  skippedPanes: { paneId: string; reason: string }[];
  cappedPanes: { paneId: string; found: number; returned: number }[];
}

/** History rows each pane keeps: small, so a flood fills it at once. */
const LIMIT = 2_000;

/** A session of its own running `command`, once its history is near full: its pane. */
async function flooding(t: StartedTmux, name: string, command: string): Promise<string> {
  await t.tmux("set-option", "-g", "history-limit", String(LIMIT));
  const pane = (await t.tmux(
    ...["new-session", "-d", "-s", name, "-x", "80", "-y", "24", "-P", "-F", "#{pane_id}"],
    command,
  )).trim();
  await waitFor(
    async () =>
      Number(await t.tmux("display-message", "-p", "-t", pane, "#{history_size}")) >=
        LIMIT * 0.85,
    `${pane} filling its history`,
  );
  return pane;
}

/**
 * The search of `pane` is truthful: it found at least `least` matches (what the rows read hold
 * at any instant), or it lists the pane as not searched, saying it kept printing.
 */
function truthful(reply: Reply, pane: string, least: number, what: string): "found" | "skipped" {
  const said = JSON.stringify({ ...reply, matches: reply.matches.slice(0, 3) });
  const skipped = reply.skippedPanes.find((s) => s.paneId === pane);
  if (skipped) {
    assert.equal(reply.complete, false, said);
    assert.doesNotMatch(skipped.reason, /clear/i, `${what}: ${said}`);
    assert.match(skipped.reason, /kept printing/, `${what}: ${said}`);
    return "skipped";
  }
  assert.ok(reply.totalMatches >= least, `${what}: ${reply.totalMatches} < ${least}: ${said}`);
  for (const m of reply.matches) assert.equal(m.paneId, pane);
  return "found";
}

Deno.test("search_panes on a pane printing seq at its history limit: its matches, or skipped as printing", async () => {
  await withTmux(
    async (t, c) => {
      const pane = await flooding(t, "flood", "seq 1 100000000");
      // At least 1 800 consecutive numbers are read (the history, a tenth trimmed at worst):
      // one in a hundred ends in 99, and one in a hundred ends in 9, a digit, 9.
      const cases: [string, boolean, number][] = [["99", false, 18], ["9.9", true, 18]];
      for (let round = 0; round < 3; round++) {
        for (const [pattern, regex, least] of cases) {
          const reply = await c.ok<Reply>("search_panes", {
            pattern,
            regex,
            session: "flood",
            scrollbackLines: LIMIT,
            maxMatchesPerPane: 100,
            maxMatches: 1000,
          });
          const how = truthful(reply, pane, least, `${pattern} (round ${round})`);
          if (how === "found") {
            // Numbers read at one instant: each match a number of the run, in order.
            const numbers = reply.matches.map((m) => Number(m.text));
            for (const n of numbers) assert.ok(Number.isInteger(n), JSON.stringify(reply.matches));
            for (let i = 1; i < numbers.length; i++) {
              assert.ok(numbers[i] > numbers[i - 1], JSON.stringify(numbers));
            }
          }
        }
      }
    },
    {},
    { width: 80, height: 24 },
  );
});

Deno.test("search_panes on panes printing base64 or yes at their limit: matches, or skipped as printing", async () => {
  await withTmux(
    async (t, c) => {
      const random = await flooding(t, "random", "cat /dev/urandom | base64");
      // 76 characters a line: one lacks an `a` of either case about once in eleven.
      for (let round = 0; round < 3; round++) {
        const reply = await c.ok<Reply>("search_panes", {
          pattern: "a",
          session: "random",
          scrollbackLines: LIMIT,
          maxMatchesPerPane: 100,
        });
        truthful(reply, random, 1_000, `base64 (round ${round})`);
      }
      await t.tmux("kill-session", "-t", "random");
      const yes = await flooding(t, "yes", "yes");
      for (let round = 0; round < 3; round++) {
        const reply = await c.ok<Reply>("search_panes", {
          pattern: "y",
          session: "yes",
          scrollbackLines: LIMIT,
          maxMatchesPerPane: 100,
        });
        truthful(reply, yes, 1_500, `yes (round ${round})`);
      }
    },
    {},
    { width: 80, height: 24 },
  );
});

Deno.test("search_panes on a pane printing a line at a time at its limit: every match", async () => {
  await withTmux(async (t, c) => {
    // At its limit from the start: its rows move with its history's size flat or falling,
    // but seldom, so a search read again at once finds them still.
    const pane = await flooding(
      t,
      "slow",
      "seq 1 3000; i=3000; while [ $i -lt 100000 ]; do i=$((i+1)); echo $i; sleep 0.02; done",
    );
    let found = 0;
    for (let round = 0; round < 3; round++) {
      const reply = await c.ok<Reply>("search_panes", {
        pattern: "99",
        session: "slow",
        scrollbackLines: LIMIT,
        maxMatchesPerPane: 100,
        maxMatches: 1000,
      });
      if (truthful(reply, pane, 18, `slow (round ${round})`) === "skipped") continue;
      found++;
      assert.equal(reply.complete, true, JSON.stringify(reply));
      const numbers = reply.matches.map((m) => Number(m.text));
      for (let i = 1; i < numbers.length; i++) {
        assert.ok(numbers[i] > numbers[i - 1], JSON.stringify(numbers));
      }
    }
    // A pane that moves now and then is searched again at once, not skipped.
    assert.ok(found > 0, "a pane printing slowly was skipped at every search");
  });
});

Deno.test("search_panes on a quiet pane at its history limit: every match, at its line", async () => {
  await withTmux(async (t, c) => {
    await t.tmux("set-option", "-g", "history-limit", String(LIMIT));
    // Past the limit, so tmux trimmed the history; then nothing more is printed.
    const pane = await t.printing(
      Array.from({ length: 5_000 }, (_, i) => String(i + 1)).join("\r\n") + "\r\nEND\r\n",
      "END",
      "exec sleep 600",
    );
    const rows = (await t.tmux("capture-pane", "-p", "-t", pane, "-S", String(-LIMIT)))
      .split("\n");
    const expected = rows.filter((r) => r.includes("99")).length;
    assert.ok(expected >= 18, String(expected));
    const reply = await c.ok<Reply>("search_panes", {
      pattern: "99",
      scrollbackLines: LIMIT,
      maxMatchesPerPane: 100,
      maxMatches: 1000,
    });
    assert.equal(reply.complete, true, JSON.stringify(reply.skippedPanes));
    assert.equal(reply.totalMatches, expected);
    assert.equal(reply.matches.length, expected);
    for (const m of reply.matches.slice(-3)) {
      const at = String(m.lineNumber);
      assert.equal(
        (await t.tmux("capture-pane", "-p", "-t", pane, "-S", at, "-E", at)).trim(),
        m.text,
      );
    }
  });
});
