/**
 * A real OpenSSH server for tests, on 127.0.0.1 and a free port, as the current user: its own
 * host key, a client key made for it, `authorized_keys` and `sshd_config`, all in a temporary
 * folder, and stopped (by pid) when the test is done. An ssh client configuration beside them
 * names it under any aliases a test asks for, with the client key, a known-hosts file in the
 * folder and `StrictHostKeyChecking accept-new`: hand it to the server as `--ssh-config`.
 *
 * Where sshd cannot be started (not installed, no privilege-separation folder), {@link
 * startSshd} returns the reason instead, and a test skips with it; CI installs openssh-server.
 *
 * @module
 */

import { startCommand, StdioServer } from "./stdio.ts";
import { cleanEnv, sh } from "./tmux.ts";

/** A running sshd and what a client needs to reach it. */
export interface Sshd {
  readonly port: number;
  readonly dir: string;
  /** The user sshd lets in: this one. */
  readonly user: string;
  /** The ssh client configuration naming every alias. */
  readonly config: string;
  /**
   * While this file exists, the remote start-up file ends its stdout and stderr without a
   * newline (a terminal title).
   */
  readonly noNewline: string;
  /** The sshd process id. */
  readonly pid: number;
  /**
   * Pids of sshd's per-connection processes (killing them drops those connections), not the
   * commands they run: a tmux control client killed outright may crash tmux 3.3a's server.
   */
  sessions(): Promise<number[]>;
  /** Stops sshd and every session it runs (by pid), removes the folder. */
  stop(): Promise<void>;
}

const SSHD = "/usr/sbin/sshd";

/**
 * A `Host` entry of an ssh client configuration that reaches `sshd` as `alias`: the client key,
 * the test's known_hosts, new host keys accepted. `settings` replace those (null leaves one
 * out: StrictHostKeyChecking at ssh's own default) or add to them (a ProxyJump).
 */
export function hostEntry(
  sshd: Pick<Sshd, "port" | "dir" | "user">,
  alias: string,
  settings: Record<string, string | null> = {},
): string {
  const all: Record<string, string | null> = {
    HostName: "127.0.0.1",
    Port: String(sshd.port),
    User: sshd.user,
    IdentityFile: `${sshd.dir}/client_key`,
    IdentitiesOnly: "yes",
    UserKnownHostsFile: `${sshd.dir}/known_hosts`,
    StrictHostKeyChecking: "accept-new",
    ...settings,
  };
  const lines = Object.entries(all).filter(([, value]) => value !== null);
  return [`Host ${alias}`, ...lines.map(([key, value]) => `  ${key} ${value}`), ""].join("\n");
}

/** A port to try (tests run without --allow-net: sshd says whether it could bind it). */
function randomPort(): number {
  return 20_000 + Math.floor(Math.random() * 40_000);
}

/** Children of `pid`, recursively (pgrep -P). */
export async function descendants(pid: number): Promise<number[]> {
  const out: number[] = [];
  const walk = async (p: number) => {
    const { stdout } = await sh("pgrep", ["-P", String(p)], { allowFail: true });
    for (const c of stdout.split("\n").filter((l) => /^\d+$/.test(l)).map(Number)) {
      out.push(c);
      await walk(c);
    }
  };
  await walk(pid);
  return out;
}

/**
 * Starts sshd with `aliases` (each a Host in the client config); a string says why not.
 * `settings`: more sshd_config lines (`MaxSessions 2`).
 */
export async function startSshd(
  aliases: readonly string[],
  settings: readonly string[] = [],
): Promise<Sshd | string> {
  try {
    await Deno.stat(SSHD);
  } catch {
    return `${SSHD} is not installed (apt-get install openssh-server)`;
  }
  try {
    await Deno.stat("/run/sshd");
  } catch {
    return "sshd's privilege-separation folder /run/sshd is missing (mkdir -p /run/sshd)";
  }
  const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-sshd-" });
  const user = (await sh("id", ["-un"])).stdout.trim();
  await sh("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", `${dir}/host_key`]);
  await sh("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", `${dir}/client_key`]);
  await Deno.copyFile(`${dir}/client_key.pub`, `${dir}/authorized_keys`);
  await Deno.writeTextFile(
    `${dir}/noisy_rc`,
    "echo 'Welcome! %begin 1 1 0'; echo '%end 1 1 0'; echo '%exit' >&2; echo 'rc: hello' >&2\n" +
      // While a test asks for it: a terminal title without a final newline, as rc files do.
      `[ -f ${dir}/no_newline ] && printf '\\033]0;title\\007' && printf 'rc: ' >&2\n`,
  );
  for (let attempt = 0; attempt < 5; attempt++) {
    const result = await tryStart(dir, user, randomPort(), aliases, settings);
    if (typeof result !== "string" || !/Address already in use|Bind to port/.test(result)) {
      if (typeof result === "string") await Deno.remove(dir, { recursive: true }).catch(() => {});
      return result;
    }
  }
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  return "sshd found no free port";
}

async function tryStart(
  dir: string,
  user: string,
  port: number,
  aliases: readonly string[],
  settings: readonly string[],
): Promise<Sshd | string> {
  await Deno.writeTextFile(
    `${dir}/sshd_config`,
    [
      `Port ${port}`,
      "ListenAddress 127.0.0.1",
      `HostKey ${dir}/host_key`,
      `AuthorizedKeysFile ${dir}/authorized_keys`,
      `PidFile ${dir}/sshd.pid`,
      "PermitRootLogin prohibit-password",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "UsePAM no",
      "StrictModes no",
      "PrintMotd no",
      "LogLevel INFO",
      `AllowUsers ${user}`,
      // The remote shell is the user's own: bash via sshd sources ~/.bashrc unless it is
      // nested (SHLVL), and this machine's takes a minute. BASH_ENV, which bash reads first,
      // prints what a chatty start-up file would: text and forged control-mode framing, on
      // stdout and stderr. The server must read none of it.
      `SetEnv SHLVL=1 BASH_ENV=${dir}/noisy_rc`,
      ...settings,
      "",
    ].join("\n"),
  );
  const hosts = aliases.map((alias) => hostEntry({ port, dir, user }, alias));
  await Deno.writeTextFile(`${dir}/ssh_config`, hosts.join(""));
  // -D: stays in the foreground as the process we started; -e: its log to stderr.
  const child = new Deno.Command(SSHD, {
    args: ["-D", "-e", "-f", `${dir}/sshd_config`],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  // Listening once it says so on stderr (-e); the rest of its log is read and dropped.
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let log = "";
  // Bounded: an sshd that neither says it listens nor exits is killed (its stderr then ends).
  const stuck = setTimeout(() => {
    log += "\n(no word of listening in 20 s: killed)";
    child.kill("SIGKILL");
  }, 20_000);
  while (!/Server listening on/.test(log)) {
    const { done, value } = await reader.read();
    if (done) break;
    log += value;
  }
  clearTimeout(stuck);
  if (!/Server listening on/.test(log)) {
    await child.status;
    return `sshd did not start: ${log.trim().split("\n").at(-1)}`;
  }
  const stderr = (async () => {
    while (!(await reader.read()).done) { /* drop */ }
  })();
  const pid = child.pid;
  return {
    port,
    dir,
    user,
    config: `${dir}/ssh_config`,
    noNewline: `${dir}/no_newline`,
    pid,
    sessions: async () => {
      const all = await descendants(pid);
      if (all.length === 0) return [];
      const { stdout } = await sh("ps", ["-o", "pid=,comm=", "-p", all.join(",")], {
        allowFail: true,
      });
      return stdout.split("\n").map((l) => l.trim().split(/\s+/))
        .filter(([p, comm]) => /^\d+$/.test(p ?? "") && comm === "sshd").map(([p]) => Number(p));
    },
    async stop() {
      for (const p of await descendants(pid)) {
        try {
          Deno.kill(p, "SIGKILL");
        } catch {
          // Gone.
        }
      }
      try {
        child.kill("SIGTERM");
      } catch {
        // Gone.
      }
      await child.status;
      await stderr;
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** Where this Deno keeps its cache (by default under the home folder). */
async function denoDir(): Promise<string> {
  const { stdout } = await sh(Deno.execPath(), ["info", "--json"]);
  return (JSON.parse(stdout) as { denoDir: string }).denoDir;
}

/**
 * The real server process under the baked flags (the `start` task) with `extra`, as the
 * current user given the home folder `home` (made, with a `~/.ssh`): in a private mount
 * namespace (`unshare -m`, root only) where a copy of /etc/passwd, written under `base`, says
 * so. Deno's cache stays where it is: under the new home it would be empty.
 */
export async function serverWithHome(
  base: string,
  home: string,
  extra: readonly string[],
): Promise<StdioServer> {
  await Deno.mkdir(`${home}/.ssh`, { recursive: true, mode: 0o700 });
  const user = (await sh("id", ["-un"])).stdout.trim();
  const passwd = (await Deno.readTextFile("/etc/passwd")).split("\n").map((line) => {
    const fields = line.split(":");
    if (fields[0] !== user) return line;
    fields[5] = home;
    return fields.join(":");
  }).join("\n");
  await Deno.writeTextFile(`${base}/passwd`, passwd);
  const { cmd, args } = startCommand();
  return new StdioServer(
    "unshare",
    [
      ...["-m", "--propagation", "private", "sh", "-c"],
      'mount --bind "$0" /etc/passwd && exec "$@"',
      `${base}/passwd`,
      cmd,
      ...args,
      ...extra,
    ],
    cleanEnv({ HOME: home, DENO_DIR: await denoDir() }),
  );
}
