import assert from "node:assert/strict";
import {
  classifyStderr,
  failureOf,
  judgeResult,
  noServerCause,
  notInstalled,
  NulArgument,
  refuseNul,
  TmuxError,
} from "./tmux_error.ts";

Deno.test("classifyStderr tells no server from no target from other failures", () => {
  assert.equal(classifyStderr("no server running on /tmp/tmux-0/x"), "no-server");
  assert.equal(
    classifyStderr("error connecting to /tmp/tmux-0/x (No such file or directory)"),
    "no-server",
  );
  assert.equal(
    classifyStderr("error connecting to /tmp/tmux-0/x (Connection refused)"),
    "no-server",
  );
  assert.equal(classifyStderr("can't find pane: %99"), "no-target");
  assert.equal(classifyStderr("can't find session: nope"), "no-target");
  assert.equal(classifyStderr("unknown command: frobnicate"), "failed");
});

Deno.test("judgeResult: a server refusing this user fails, though tmux exits 0", () => {
  // tmux 3.3a, asked by a user its server-access does not allow: this on stderr, status 0.
  const refused = { code: 0, stdout: new Uint8Array(), stderr: "access not allowed\n" };
  assert.throws(
    () => judgeResult(refused),
    (e: unknown) =>
      e instanceof TmuxError && e.kind === "failed" && e.message === "access not allowed",
  );
  assert.equal(classifyStderr("access not allowed"), "failed");
  const ok = { code: 0, stdout: new Uint8Array([0x61]), stderr: "" };
  assert.deepEqual(judgeResult(ok), new Uint8Array([0x61]));
});

Deno.test("notInstalled: a NUL in a child's arguments or environment is no missing tmux", () => {
  const spawnError = (options: Deno.CommandOptions) => {
    try {
      new Deno.Command("true", options).spawn();
    } catch (error) {
      return error;
    }
    assert.fail("Deno started a process with a NUL in it");
  };
  for (const options of [{ args: ["a\0b"] }, { env: { V: "a\0b" } }]) {
    const error = notInstalled("tmux", spawnError(options));
    assert.ok(error instanceof NulArgument, error.message);
    assert.equal(error.kind, "failed");
    assert.match(error.message, /NUL character; nothing was run/);
    assert.doesNotMatch(error.message, /install|PATH/i);
  }
  assert.equal(notInstalled("tmux", new Deno.errors.NotFound("x")).kind, "not-installed");
  assert.throws(() => refuseNul(["set-option", "@x", "a\0"]), NulArgument);
  refuseNul(["set-option", "@x", "a"]);
});

Deno.test("noServerCause tells something refusing at the path from nothing there, by tmux's words", () => {
  const said = (stderr: string) => noServerCause(failureOf({ code: 1, stderr }));
  // tmux 3.3a's words for ECONNREFUSED: a socket left behind, a file, a FIFO, a directory.
  assert.equal(said("no server running on /tmp/x/notasocket.txt"), "refused");
  assert.equal(said("error connecting to /tmp/x/s (Connection refused)"), "refused");
  assert.equal(said("error connecting to /tmp/x/s (No such file or directory)"), "absent");
  assert.equal(said("server exited unexpectedly"), "lost");
  assert.equal(said("lost server"), "lost");
  assert.equal(said("error connecting to /tmp/x/d (Is a directory)"), null);
  assert.equal(noServerCause(new Error("no server running on /x")), null);
});
