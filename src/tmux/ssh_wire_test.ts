import assert from "node:assert/strict";
import { AfterMarker, remoteTmuxCommand, shellWord, streamAfterMarker } from "./ssh_wire.ts";

const NASTY = [
  "",
  "plain",
  "it's",
  "a\\b",
  "\\'",
  "'\\''",
  "$(touch /tmp/tmux-mcp-ssh-test-pwned)",
  "`id`",
  "$HOME ${PATH} $1 $@ !! ~ * ? [a]",
  "semi; colon && and || or | pipe > out < in & bg",
  'double "quotes" \\n',
  "new\nline",
  "tab\there",
  "#{pane_id} #(id) %begin",
  "日本語 🙂",
  "-oProxyCommand=x",
];

async function echoThrough(shell: string, words: string[]): Promise<string[]> {
  const script = `for a in ${words.map(shellWord).join(" ")}; do printf '%s\\0' "$a"; done`;
  const out = await new Deno.Command(shell, {
    args: ["-c", script],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const text = new TextDecoder().decode(out.stdout);
  return text.split("\0").slice(0, -1);
}

Deno.test("shellWord: every value reaches the remote command as one literal word", async () => {
  for (const shell of ["sh", "bash", "dash"]) {
    try {
      assert.deepEqual(await echoThrough(shell, NASTY), NASTY, shell);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) continue; // that shell is not installed
      throw error;
    }
  }
  await assert.rejects(Deno.stat("/tmp/tmux-mcp-ssh-test-pwned"), Deno.errors.NotFound);
});

Deno.test("remoteTmuxCommand: marker first, then tmux with quoted words only", () => {
  const line = remoteTmuxCommand("tmux-mcp-abc", "tmux", ["-L", "x y", "display", "-p", "$(id)"]);
  assert.ok(
    line.startsWith("echo; echo tmux-mcp-abc; echo >&2; echo tmux-mcp-abc >&2; exec env PATH="),
    line,
  );
  assert.ok(line.endsWith(`'tmux' '-L' 'x y' 'display' '-p' '$(id)'`), line);
  // Variables for tmux come as quoted words of env, never as shell text.
  const marked = remoteTmuxCommand("m", "tmux", ["-C"], { TERM: "tmux-mcp", X: "$(id)'" });
  assert.ok(marked.endsWith(` 'TERM=tmux-mcp' 'X=$(id)'\\''' 'tmux' '-C'`), marked);
  assert.throws(() => remoteTmuxCommand("m", "tmux", [], { "A;B": "x" }), RangeError);
});

Deno.test("remoteTmuxCommand gated: tmux runs only after the go line, and gets the rest of stdin whole", async () => {
  // `cat` stands for tmux: what it prints is what tmux would have read.
  const line = remoteTmuxCommand("tmux-mcp-m", "cat", [], {}, true);
  assert.ok(line.includes("; read tmux_mcp_go && exec env PATH="), line);
  const enc = new TextEncoder();
  for (const shell of ["sh", "bash", "dash", "zsh", "fish"]) {
    for (
      const [input, code, out] of [
        ["\n%begin\nline two\n", 0, "line two"], // the go, then what is tmux's
        ["", 1, ""], // an end of file instead: no tmux
        ["\n", 0, ""],
      ] as const
    ) {
      let child: Deno.ChildProcess;
      try {
        child = new Deno.Command(shell, {
          args: ["-c", line],
          stdin: "piped",
          stdout: "piped",
          stderr: "piped",
        }).spawn();
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) break; // that shell is not installed
        throw error;
      }
      const writer = child.stdin.getWriter();
      await writer.write(enc.encode(input));
      await writer.close();
      const result = await child.output();
      const stdout = new TextDecoder().decode(result.stdout);
      const what = `${shell} given ${JSON.stringify(input)}`;
      assert.equal(result.code, code, what);
      assert.equal(stdout, `\ntmux-mcp-m\n${out === "" ? "" : `%begin\n${out}\n`}`, what);
    }
  }
});

Deno.test("AfterMarker: only what follows the marker line, across chunk boundaries", () => {
  const enc = new TextEncoder();
  const text = "motd\n%begin 1 2 3\nnot-quite-tmux-mcp-m\ntmux-mcp-m\n%begin 9 9 1\nrest";
  for (let cut = 0; cut <= text.length; cut += 3) {
    const after = new AfterMarker("tmux-mcp-m");
    const a = after.push(enc.encode(text.slice(0, cut))).slice();
    const b = after.push(enc.encode(text.slice(cut))).slice();
    assert.equal(new TextDecoder().decode(new Uint8Array([...a, ...b])), "%begin 9 9 1\nrest");
    assert.ok(after.found);
  }
  const never = new AfterMarker("tmux-mcp-m");
  assert.equal(never.push(enc.encode("ssh: connect refused\n")).length, 0);
  assert.ok(!never.found);
  assert.equal(new TextDecoder().decode(never.held), "ssh: connect refused\n");
});

Deno.test("streamAfterMarker: a byte stream a BYOB reader can read", async () => {
  const enc = new TextEncoder();
  const source = ReadableStream.from([enc.encode("junk\ntmux-"), enc.encode("mcp-m\n%exit\n")]);
  const reader = streamAfterMarker(source, "tmux-mcp-m").getReader({ mode: "byob" });
  let got = "";
  while (true) {
    const { done, value } = await reader.read(new Uint8Array(64));
    if (done) break;
    got += new TextDecoder().decode(value);
  }
  assert.equal(got, "%exit\n");
});
