/**
 * What a remote call's reader tells of its marker: the moment the host's start-up files are done
 * and tmux runs there, which a client's start waits for (handshake_hold.ts's farAct). A real
 * child stands for ssh: the shell prints what a remote shell would.
 */
import assert from "node:assert/strict";
import { collectAnswer, streamAnswer } from "./child_answer.ts";

const HOST = { host: "h1", socketName: "s" };

/** A child printing a start-up's noise, then the marker line, then `answer`. */
function remote(answer: string): Deno.ChildProcess {
  return new Deno.Command("sh", {
    args: [
      "-c",
      `printf 'motd\\n'; echo; echo tmux-mcp-m; echo >&2; echo tmux-mcp-m >&2; ${answer}`,
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

Deno.test("collectAnswer and streamAnswer tell once that the marker came, and keep only what follows", async () => {
  for (const answer of ["printf 'a\\nb\\n'", "true"]) {
    let told = 0;
    const collected = await collectAnswer(
      remote(answer),
      new AbortController().signal,
      HOST,
      1 << 20,
      "tmux-mcp-m",
      undefined,
      false,
      () => told++,
    );
    const out = answer === "true" ? "" : "a\nb\n";
    assert.equal(new TextDecoder().decode(collected.stdout), out);
    assert.equal(told, 1, `collectAnswer, ${answer}`);
    told = 0;
    let streamed = "";
    const result = await streamAnswer(
      remote(answer),
      new AbortController().signal,
      (chunk) => void (streamed += new TextDecoder().decode(chunk)),
      HOST,
      1 << 20,
      "tmux-mcp-m",
      () => told++,
    );
    assert.equal(result.code, 0);
    assert.equal(streamed, out);
    assert.equal(told, 1, `streamAnswer, ${answer}`);
  }
  // No marker (the remote shell never ran the command): never told.
  let told = 0;
  const child = new Deno.Command("sh", {
    args: ["-c", "echo 'ssh: connect refused' >&2; exit 255"],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  await assert.rejects(
    streamAnswer(
      child,
      new AbortController().signal,
      () => {},
      HOST,
      1 << 20,
      "tmux-mcp-m",
      () => told++,
    ),
  );
  assert.equal(told, 0);
});
