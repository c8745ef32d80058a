import assert from "node:assert/strict";
import { SshHosts } from "./ssh.ts";

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

Deno.test("SshHosts: what the person's config sets up for their own ssh is undone on every ssh", () => {
  // A RemoteCommand would refuse the command line; forwardings would take the person's ports.
  const hosts = new SshHosts({ destinations: ["box"] }, () => {
    throw new Error("no ssh here");
  });
  const argv = hosts.argv("box", "tmux", ["list-panes"]);
  const options = argv.slice(0, argv.indexOf("--"));
  for (
    const option of [
      "RemoteCommand=none",
      "ClearAllForwardings=yes",
      "ForwardAgent=no",
      "ForwardX11=no",
      "PermitLocalCommand=no",
      "Tunnel=no",
    ]
  ) {
    assert.ok(options.includes(option), `${option} in ${options.join(" ")}`);
  }
  assert.ok(options.includes("-T"));
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
