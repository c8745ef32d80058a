import assert from "node:assert/strict";
import { TestTmux } from "../../tests/helpers/tmux.ts";
import { argvAnswer, argvBytes, asCommandFile, MAX_ARGV_BYTES } from "./command_file.ts";
import { TmuxRunner } from "./run.ts";
import { TmuxError } from "./tmux_error.ts";

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

Deno.test("argvBytes counts UTF-8 bytes and a NUL per argument, as tmux does", () => {
  assert.equal(argvBytes([]), 0);
  assert.equal(argvBytes(["", "ab"]), 1 + 3);
  assert.equal(argvBytes(["é🙂"]), 2 + 4 + 1);
});

Deno.test("asCommandFile: only a line past the limit, and only when stdin is free", () => {
  const fits = ["display-message", "-p", "x".repeat(MAX_ARGV_BYTES - 40)];
  assert.equal(asCommandFile(fits), null);
  const long = ["display-message", "-p", "x".repeat(MAX_ARGV_BYTES)];
  assert.equal(asCommandFile(long, new Uint8Array([1])), null, "a load-buffer's text holds stdin");
  const file = asCommandFile(long)!;
  assert.deepEqual(file.args, ["source-file", "-"]);
  assert.equal(text(file.stdin), `'display-message' '-p' '${long[2]}'\n`);
});

Deno.test("asCommandFile quotes every word as tmux's parser reads it, split as tmux splits argv", () => {
  const pad = "p".repeat(MAX_ARGV_BYTES);
  const line = (args: string[]) => text(asCommandFile([...args, pad])!.stdin).replace(pad, "P");
  // An argument ending in `;` ends its command, `\\;` stands for a `;`, as in tmux's argv.
  assert.equal(
    line(["set-option", "-g", "@a", "it's\n$HOME ~", ";", "x;", "a\\;", "%if"]),
    `'set-option' '-g' '@a' 'it'\\''s'"\\n"'$HOME ~' ; 'x' ; 'a;' '%if' 'P'\n`,
  );
  // A server starting command starts the server first: source-file itself starts none.
  assert.deepEqual(asCommandFile(["new-session", "-d", pad])!.args, [
    "start-server",
    ";",
    "source-file",
    "-",
  ]);
  assert.deepEqual(asCommandFile(["if-shell", "-F", "1", pad])!.args, ["source-file", "-"]);
});

Deno.test("argvAnswer: what tmux's parser says of a file reads as it says it of arguments", () => {
  const bytes = (s: string) => new TextEncoder().encode(s);
  const refused = { code: 1, stdout: bytes("-:1: unknown command: x\n"), stderr: "" };
  assert.deepEqual(argvAnswer(refused), {
    code: 1,
    stdout: new Uint8Array(),
    stderr: "unknown command: x\n",
  });
  // A command's own failure, and output that only looks like a complaint, stay as they are.
  const failed = {
    code: 1,
    stdout: bytes("-:1: a pane's text\n"),
    stderr: "can't find pane: %9\n",
  };
  assert.equal(argvAnswer(failed), failed);
  const ran = { code: 0, stdout: bytes("-:1: a pane's text\n"), stderr: "" };
  assert.equal(argvAnswer(ran), ran);
});

// tmux 3.3a: 16 384 bytes a message, less its 16-byte header and the 4-byte argument count.
Deno.test("tmux fact: a tmux process takes 16 364 bytes of arguments, no more", async () => {
  const t = await TestTmux.start();
  try {
    const sized = (n: number) => ["display-message", "-p", "x".repeat(n - 16 - 3 - 1)];
    assert.equal(argvBytes(sized(16_364)), 16_364);
    assert.equal((await t.tmuxRaw(...sized(16_364))).code, 0);
    const over = await t.tmuxRaw(...sized(16_365));
    assert.equal(over.code, 1);
    assert.ok(MAX_ARGV_BYTES <= 16_364);
  } finally {
    await t.kill();
  }
});

Deno.test("runner: a line past tmux's limit runs whole, its output and complaints as given in argv", async () => {
  const t = await TestTmux.start();
  const runner = new TmuxRunner();
  const addr = { socketName: t.socket };
  try {
    // Everything tmux's parser would expand or take for a directive, unquoted.
    const value = `%if 1\n$HOME ~ #{pid} 'q' "d" \\ ; {x}\r` + "y".repeat(20_000);
    await runner.run(addr, ["set-option", "-g", "@v", value]);
    assert.equal(text(await runner.run(addr, ["show-options", "-gv", "@v"])), `${value}\n`);
    const long = "z".repeat(20_000);
    assert.equal(text(await runner.run(addr, ["display-message", "-p", long])), `${long}\n`);
    // A chain stops at its failing command, whose complaint reads as in argv.
    const chain = ["display-message", "-p", "first", ";", "select-pane", "-t", "%999", ";"];
    const failed = await runner.exec(addr, [...chain, "display-message", "-p", long]);
    assert.equal(failed.code, 1);
    assert.equal(text(failed.stdout), "first\n");
    await assert.rejects(
      runner.run(addr, [...chain, "display-message", "-p", long]),
      (e: unknown) =>
        e instanceof TmuxError && e.kind === "no-target" && e.message === "can't find pane: %999",
    );
    // A line tmux's parser refuses runs nothing, and says why as for arguments.
    const refused = await runner.exec(addr, [...chain, "display-message", "-x", long]);
    assert.deepEqual(
      [refused.code, text(refused.stdout), refused.stderr],
      [1, "", "command display-message: unknown flag -x\n"],
    );
    await assert.rejects(
      runner.run(addr, ["frobnicate", long]),
      (e: unknown) =>
        e instanceof TmuxError && e.kind === "failed" &&
        e.message === "unknown command: frobnicate",
    );
  } finally {
    await runner.close();
    await t.kill();
  }
});

Deno.test("runner: a line past tmux's limit starts a server only where argv would", async () => {
  const t = new TestTmux();
  const runner = new TmuxRunner();
  const addr = { socketName: t.socket };
  try {
    const long = "z".repeat(20_000);
    await assert.rejects(
      runner.run(addr, ["display-message", "-p", long]),
      (e: unknown) => e instanceof TmuxError && e.kind === "no-server",
    );
    assert.equal((await t.tmuxRaw("list-sessions")).code, 1, "no server was started");
    const made = await runner.run(addr, [
      "new-session",
      "-d",
      "-P",
      "-F",
      "#{session_id}",
      "--",
      `: ${long}; sleep 100`,
    ]);
    assert.match(text(made), /^\$\d+\n$/);
  } finally {
    await runner.close();
    await t.kill();
  }
});
