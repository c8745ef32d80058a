import assert from "node:assert/strict";
import {
  AfterMarker,
  hostKeyRefusal,
  remoteTmuxCommand,
  shellWord,
  sshComplaint,
  SshHosts,
  streamAfterMarker,
} from "./ssh.ts";

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

Deno.test("SshHosts: options come from here only; a host fails fast after a failed connect", async () => {
  const spawned: string[][] = [];
  const hosts = new SshHosts(
    { destinations: ["a", "user@b"], configFile: "/cfg" },
    (args) => {
      spawned.push([...args]);
      // Stands in for an ssh that cannot connect: exits at once, saying why.
      return new Deno.Command("sh", {
        args: ["-c", "echo 'ssh: connect to host a port 22: Connection refused' >&2; exit 255"],
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
    },
  );
  assert.ok(hosts.has("a") && hosts.has("user@b") && !hosts.has("b"));
  const argv = hosts.argv("user@b", "tmux", ["list-panes"]);
  assert.deepEqual(argv.slice(0, 3), ["-F", "/cfg", "-T"]);
  assert.ok(argv.includes("BatchMode=yes") && argv.includes("ControlMaster=no"));
  assert.deepEqual(argv.slice(-3, -1), ["--", "user@b"]);
  await assert.rejects(hosts.ensure("a"), /Host "a" did not answer over SSH: .*Connection refused/);
  await assert.rejects(hosts.ensure("a"), /Connection refused/);
  assert.equal(spawned.length, 1, "the second call failed at once, without a new ssh");
  assert.ok(spawned[0].includes("ControlMaster=auto"));
  await hosts.close();
});

Deno.test("SshHosts: without write permission the control socket goes to ~/.ssh, never /tmp", async () => {
  // A shared folder would let another user take the socket's name first: an ssh client connects
  // to whatever sits at its ControlPath.
  const script = await Deno.makeTempFile({ suffix: ".ts" });
  try {
    await Deno.writeTextFile(
      script,
      `import { SshHosts } from ${JSON.stringify(new URL("./ssh.ts", import.meta.url).href)};\n` +
        `const hosts = new SshHosts({ destinations: ["h1", "h2"] }, () => { throw new Error(); });\n` +
        `console.log(JSON.stringify(hosts.argv("h2", "tmux", ["-V"])));\n`,
    );
    // The baked flags grant no file access at all.
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", "--no-config", script],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const argv = JSON.parse(new TextDecoder().decode(out.stdout)) as string[];
    const path = argv.find((a) => a.startsWith("ControlPath="))!;
    // Short: ssh binds at this path plus 17 characters, within a Unix socket's 107 bytes
    // (103 on macOS) with the home's path in front.
    assert.match(path, /^ControlPath=%d\/\.ssh\/tmux-mcp-[0-9a-f]{10}-h1$/);
  } finally {
    await Deno.remove(script);
  }
});

Deno.test("SshHosts: a socket path too long for ssh: every ssh connects on its own", async () => {
  // Host a's path fits, b's and c's do not (as at 10 hosts, where "-h10" is a byte longer).
  const spawned: string[][] = [];
  const children: Deno.ChildProcess[] = [];
  let exited = 0;
  const hosts: SshHosts = new SshHosts(
    { destinations: ["a", "b", "c"] },
    (args) => {
      spawned.push([...args]);
      const host = args[args.indexOf("--") + 1];
      const tooLong = host !== "a" && args.includes("ControlMaster=auto");
      const child = new Deno.Command("sh", {
        args: tooLong
          ? [
            "-c",
            `echo 'unix_listener: path "/home/someone/.ssh/x-h1.AbCdEfGh12345678" too long ` +
            `for Unix domain socket' >&2; exit 255`,
          ]
          : ["-c", 'echo; echo "$0"; exec cat >/dev/null', hosts.marker],
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      children.push(child);
      child.status.then(() => exited++);
      return child;
    },
  );
  await hosts.ensure("a");
  assert.ok(!hosts.argv("a", "tmux", []).includes("ControlPath=none"), "a has its socket");
  // Two hosts at once: the one that fails second is started again too, not reported down.
  await Promise.all([hosts.ensure("b"), hosts.ensure("c")]);
  await hosts.ensure("b");
  for (const host of ["a", "b", "c"]) {
    assert.ok(hosts.argv(host, "tmux", []).includes("ControlPath=none"), host);
  }
  const masters = spawned.map((args) => [
    args[args.indexOf("--") + 1],
    args.find((x) => x.startsWith("ControlMaster="))!,
  ]);
  assert.deepEqual(masters.sort(), [
    ["a", "ControlMaster=auto"],
    ["b", "ControlMaster=auto"],
    ["b", "ControlMaster=no"],
    ["c", "ControlMaster=auto"],
    ["c", "ControlMaster=no"],
  ]);
  await hosts.close();
  assert.equal(exited, children.length, "every master ended, a's too");
});

Deno.test("sshComplaint, hostKeyRefusal: ssh's reason, never a banner of @ or a bare \\r", () => {
  const changed = [
    "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@",
    "@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @",
    "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@",
    "IT IS POSSIBLE THAT SOMEONE IS DOING SOMETHING NASTY!",
    "Offending ED25519 key in /home/u/.ssh/known_hosts:3",
    '  ssh-keygen -f "/home/u/.ssh/known_hosts" -R "[10.0.0.5]:2222"',
    "Host key for [10.0.0.5]:2222 has changed and you have requested strict checking.",
    "Host key verification failed.",
    "",
  ].join("\r\n");
  const said = hostKeyRefusal(changed)!;
  assert.match(said, /REMOTE HOST IDENTIFICATION HAS CHANGED/);
  assert.match(said, /Retrying will not help/);
  assert.match(said, /ssh-keygen -R '\[10\.0\.0\.5\]:2222'/);
  // A name with anything but name characters is not offered as a command.
  assert.match(hostKeyRefusal(changed.replace("[10.0.0.5]:2222 has", "x;rm has"))!, /-R 'HOST'/);
  const unknown = "ssh_askpass: exec(/dev/null/x): Not a directory\r\n" +
    "Host key verification failed.\r\nkex_exchange_identification: Connection closed\r\n";
  assert.match(hostKeyRefusal(unknown)!, /not in known_hosts.*Retrying will not help/);
  assert.equal(hostKeyRefusal("ssh: connect to host a port 22: Connection refused\n"), null);
  assert.equal(sshComplaint(unknown), "Host key verification failed.");
  assert.equal(
    sshComplaint(
      "ssh_askpass: exec(/dev/null/x): Not a directory\r\n" +
        "Warning: Permanently added '[127.0.0.1]:2222' (ED25519) to the list of known hosts.\r\n" +
        "u@127.0.0.1: Permission denied (publickey).\r\n",
    ),
    "u@127.0.0.1: Permission denied (publickey).",
  );
  assert.equal(sshComplaint("\n@@@\n\r\n"), undefined);
});
