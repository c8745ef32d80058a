/**
 * drawnState: the attributes `capture-pane -e` text leaves set, as one sequence from default;
 * escapeBoundary: a cut never splits an escape sequence.
 */

import assert from "node:assert/strict";
import { drawnState, escapeBoundary } from "./sgr_state.ts";

Deno.test("drawnState: what tmux's codes leave set, set again from default", () => {
  assert.equal(drawnState("plain\nrows"), "");
  assert.equal(drawnState("\x1b[31m\x1b[44mred\nstill"), "\x1b[31;44m");
  // Each colour's last word counts; 256 colours and RGB whole.
  assert.equal(
    drawnState("\x1b[31ma\x1b[38;5;200mb\x1b[48;2;1;2;3mc"),
    "\x1b[38;5;200;48;2;1;2;3m",
  );
  // Off codes take their attributes; 0 takes all.
  assert.equal(drawnState("\x1b[1m\x1b[2m\x1b[4m\x1b[22mx"), "\x1b[4m");
  assert.equal(drawnState("\x1b[1;7;31m\x1b[0mx"), "");
  assert.equal(drawnState("\x1b[39m\x1b[49m\x1b[4:3mx\x1b[58:2::1:2:3m"), "\x1b[4:3;58:2::1:2:3m");
  assert.equal(drawnState("\x1b[4:3mx\x1b[4:0m"), "");
  assert.equal(drawnState("\x1b[1m\x1b[39m\x1b[49m"), "\x1b[1m");
  // tmux 3.3a writes overline as 5:3, beside blink's 5: both kept.
  assert.equal(drawnState("\x1b[5;5:3mA\n"), "\x1b[5;5:3m");
  assert.equal(drawnState("\x1b[5;5:3mA\x1b[25m"), "\x1b[5:3m");
  // The line-drawing set: SO on, SI off.
  assert.equal(drawnState("\x0elqk"), "\x0e");
  assert.equal(drawnState("\x0elqk\x0f x"), "");
  assert.equal(drawnState("\x1b[31m\x0eq"), "\x1b[31m\x0e");
});

Deno.test("escapeBoundary: a cut inside a sequence moves to its end", () => {
  const line = "ab\x1b[31;44mcd\x0eq";
  assert.equal(escapeBoundary(line, 0), 0);
  assert.equal(escapeBoundary(line, 2), 2);
  assert.equal(escapeBoundary(line, 3), 10);
  assert.equal(escapeBoundary(line, 9), 10);
  assert.equal(escapeBoundary(line, 10), 10);
  assert.equal(escapeBoundary(line, 12), 12);
});
