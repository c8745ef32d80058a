/**
 * show_environment and set_environment where a program in a pane gave a variable an odd name
 * (`tmux set-environment -r 'BAR;X'`, or a name holding `;` and a line break, which makes
 * tmux's `show-environment -s` listing ambiguous): each variable is read as the one tmux holds,
 * told by the plain listing read in the same step, listings that disagree are refused rather
 * than guessed, and set_environment reads back only its own variable, so nobody else's name
 * can break its reply.
 */

import assert from "node:assert/strict";
import { withTmux } from "./helpers/mcp.ts";
import { checkedEnvironment } from "../src/tools/environment_read.ts";

type Vars = { variables: { name: string; value: string | null; removed: boolean }[] };

const enc = (s: string) => new TextEncoder().encode(s);

Deno.test("checkedEnvironment takes a listing only when both forms of it agree byte for byte", () => {
  const shell = enc('A="1"; export A;\nunset BAR;X;\nunset X="v"; export unset X;\n');
  assert.deepEqual(checkedEnvironment(shell, enc('A=1\n-BAR;X\n-X="v"; export unset X\n')), [
    { name: "A", value: "1" },
    { name: "BAR;X", value: null },
    { name: 'X="v"; export unset X', value: null },
  ]);
  // The same -s listing, from a variable `unset X` holding v: the plain listing tells.
  assert.deepEqual(checkedEnvironment(shell, enc("A=1\n-BAR;X\nunset X=v\n")), [
    { name: "A", value: "1" },
    { name: "BAR;X", value: null },
    { name: "unset X", value: "v" },
  ]);
  // One removed name holding `;` and a line break, or two removed variables: the plain
  // listing tells which.
  const twoOrOne = enc("unset FOO;\nunset LD_PRELOAD;\n");
  assert.deepEqual(checkedEnvironment(twoOrOne, enc("-FOO;\nunset LD_PRELOAD\n")), [
    { name: "FOO;\nunset LD_PRELOAD", value: null },
  ]);
  assert.deepEqual(checkedEnvironment(twoOrOne, enc("-FOO\n-LD_PRELOAD\n")), [
    { name: "FOO", value: null },
    { name: "LD_PRELOAD", value: null },
  ]);
  // Listings that do not describe one environment: refused, never guessed.
  assert.throws(() => checkedEnvironment(twoOrOne, enc("-FOO\n")), /do not agree/);
  assert.throws(() => checkedEnvironment(twoOrOne, enc("-FOO\n-LD_PRELOAD\n-X\n")), /agree/);
  assert.throws(() => checkedEnvironment(enc('A="1"; export A;\n'), enc("A=2\n")), /agree/);
  assert.throws(() => checkedEnvironment(enc("A=1\n"), enc("A=1\n")), /agree/);
  // Bytes that are not UTF-8 are compared as bytes, not as what they decode to.
  const bad = new Uint8Array([0x42, 0x3d, 0x22, 0xff, 0x22, ...enc("; export B;\n")]);
  assert.deepEqual(checkedEnvironment(bad, new Uint8Array([0x42, 0x3d, 0xff, 0x0a])), [
    { name: "B", value: "\uFFFD" },
  ]);
  assert.throws(() => checkedEnvironment(bad, new Uint8Array([0x42, 0x3d, 0xfe, 0x0a])));
});

Deno.test("a removed name holding ';' is read exactly; set_environment is not broken by it", async () => {
  await withTmux(async (t, c) => {
    await t.tmux("set-environment", "-t", "main", "-r", "BAR;X");
    await t.tmux("set-environment", "-t", "main", "--", "unset Y", "v");
    const all = await c.ok<Vars>("show_environment", { session: "main" });
    assert.deepEqual(all.variables.find((v) => v.name === "BAR;X")?.removed, true);
    assert.deepEqual(all.variables.find((v) => v.name === "unset Y")?.value, "v");
    assert.equal(all.variables.some((v) => v.name === "BAR" || v.name === "Y"), false);
    const set = await c.ok<{ value: string; present: boolean }>("set_environment", {
      session: "main",
      name: "EDITOR",
      value: "vim",
    });
    assert.deepEqual([set.present, set.value], [true, "vim"]);
  });
});

Deno.test("a name with ';' and a line break is read as the one variable it is, not as two", async () => {
  await withTmux(async (t, c) => {
    const odd = "FOO;\nunset LD_PRELOAD";
    await t.tmux("set-environment", "-t", "main", "-r", odd);
    const all = await c.ok<Vars>("show_environment", { session: "main" });
    assert.deepEqual(all.variables.filter((v) => /FOO|LD_PRELOAD/.test(v.name)), [
      {
        name: odd,
        value: null,
        removed: true,
        metadataComplete: true,
        omittedMetadataBytes: 0,
      },
    ]);
    // One variable by name is read exactly all the same.
    await t.tmux("set-environment", "-t", "main", "EDITOR", "nano");
    const one = await c.ok<Vars>("show_environment", { session: "main", name: "EDITOR" });
    assert.deepEqual(one.variables.map((v) => [v.name, v.value]), [["EDITOR", "nano"]]);
    const none = await c.ok<Vars>("show_environment", { session: "main", name: "LD_PRELOAD" });
    assert.deepEqual(none.variables, []);
    // set_environment reads back its own variable only.
    const set = await c.ok<{ value: string; present: boolean; removed: boolean }>(
      "set_environment",
      { session: "main", name: "EDITOR", value: "vim" },
    );
    assert.deepEqual([set.present, set.value, set.removed], [true, "vim", false]);
    assert.equal(await t.tmux("show-environment", "-t", "main", "EDITOR"), "EDITOR=vim\n");
    const removed = await c.ok<{ value: null; present: boolean; removed: boolean }>(
      "set_environment",
      { session: "main", name: "EDITOR", remove: true },
    );
    assert.deepEqual([removed.present, removed.value, removed.removed], [true, null, true]);
    const unset = await c.ok<{ present: boolean }>("set_environment", {
      session: "main",
      name: "EDITOR",
      unset: true,
    });
    assert.equal(unset.present, false);
    // The global environment too.
    await t.tmux("set-environment", "-g", "-r", "G;\nunset PATH");
    await t.tmux("set-environment", "-g", "--", "H;\nunset I", "w");
    const global = await c.ok<Vars>("show_environment", {});
    assert.deepEqual(
      global.variables.filter((v) => /^[GHI]\b/.test(v.name)).map((v) => [v.name, v.value]),
      [["G;\nunset PATH", null], ["H;\nunset I", "w"]],
    );
    assert.ok(global.variables.some((v) => v.name === "PATH" && v.value !== null));
    const g = await c.ok<{ value: string; present: boolean }>("set_environment", {
      name: "GLOBAL_ONE",
      value: "g",
    });
    assert.deepEqual([g.present, g.value], [true, "g"]);
  });
});
