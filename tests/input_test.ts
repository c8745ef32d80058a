/**
 * send_keys, send_keys_batch, paste_text and run_command against real tmux on private
 * sockets. Exactness is checked at the byte level: a "recorder" pane runs `cat` on a raw
 * terminal into a file, so the file holds exactly the bytes the pane received.
 */

import assert from "node:assert/strict";
import { connect, summaryOf, type TestClient } from "./helpers/mcp.ts";
import { recorder, removeRecorders } from "./helpers/recorder.ts";
import { cleanEnv, RecordingRunner, sh, ShellGate, TestTmux, waitFor } from "./helpers/tmux.ts";
import { startCommand, StdioServer } from "./helpers/stdio.ts";
import { TmuxRunner } from "../src/tmux/run.ts";
import { TmuxContext } from "../src/mcp/context.ts";
import { MAX_RESULT_BYTES } from "../src/mcp/bounds.ts";
import { deliverInput } from "../src/mcp/input_guard.ts";
import { parseWindowName } from "../src/tools/prompt_programs.ts";
import { typedCommand } from "../src/tools/typed.ts";

type Server = TestTmux & { ids: { sessionId: string; windowId: string; paneId: string } };

async function withServer(
  fn: (t: Server, c: TestClient) => Promise<void>,
  options: { maxResultBytes?: number; runner?: TmuxRunner } = {},
): Promise<void> {
  const t = await TestTmux.start();
  const c = await connect({ socketName: t.socket, ...options });
  try {
    await fn(t, c);
  } finally {
    await c.close();
    await t.kill();
    await removeRecorders();
  }
  assert.equal(c.server.runner.running, 0, "no tmux child left behind");
}

const bytes = (s: string) => Array.from(new TextEncoder().encode(s));

async function received(
  rec: { read: () => Promise<Uint8Array> },
  expected: string,
): Promise<void> {
  const want = bytes(expected);
  const got = await waitFor(async () => {
    const data = Array.from(await rec.read());
    return data.length >= want.length ? data : null;
  }, `${want.length} bytes in the recorder`);
  assert.deepEqual(got, want);
}

async function currentCommand(t: Server, paneId: string): Promise<string> {
  return (await t.tmux("display-message", "-p", "-t", paneId, "#{pane_current_command}")).trim();
}

/**
 * Waits until `name` really runs in the foreground of a pane's terminal. pane_current_command
 * alone proves nothing in a pane a moment old: while no process holds the terminal yet, tmux
 * reports the pane's start command there ("fish" before fish, or even the shell that will
 * exec it, has started).
 */
async function foreground(t: Server, paneId: string, name: string): Promise<void> {
  await waitFor(async () => {
    const [command, tty] = (await t.tmux(
      "display-message",
      "-p",
      "-t",
      paneId,
      "#{pane_current_command}\t#{pane_tty}",
    )).trim().split("\t");
    if (command !== name) return false;
    // The terminal's foreground process group is marked + by ps.
    const ps = await sh("ps", ["-o", "stat=,comm=", "-t", tty], { allowFail: true });
    return ps.stdout.split("\n").some((l) => /^\S*\+\S*\s+(\S+)$/.exec(l.trim())?.[1] === name);
  }, `${name} in the foreground of ${paneId}`);
}

/** Waits until a shell has taken a typed line ending in `end`: the cursor is on the row below. */
async function lineTaken(t: Server, paneId: string, end: string): Promise<void> {
  await waitFor(async () => {
    const { x, y, row } = await t.cursorRow(paneId, -1);
    return x === 0 && y > 0 && row.trimEnd().endsWith(end);
  }, `${paneId} to take its line`);
}

// ---------------------------------------------------------------------------------------------
// send_keys

Deno.test('keys: ["C-c"] interrupts sleep 100; text "C-c" types three characters', async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    await c.ok("send_keys", { paneId: p, text: "sleep 100" });
    await waitFor(async () => (await currentCommand(t, p)) === "sleep", "sleep to run");
    const sent = await c.ok<{ enter: boolean; keys: string[] }>("send_keys", {
      paneId: p,
      keys: ["C-c"],
    });
    assert.equal(sent.enter, false, "keys alone do not press Enter");
    assert.deepEqual(sent.keys, ["C-c"]);
    await waitFor(async () => (await currentCommand(t, p)) === "sh", "sleep to be interrupted");

    const rec = await recorder(t);
    await c.ok("send_keys", { paneId: rec.paneId, text: "C-c", enter: false });
    await received(rec, "C-c");
  });
});

Deno.test("keys alone press no Enter; text, then keys, then Enter, in that order", async () => {
  await withServer(async (t, c) => {
    const rec = await recorder(t);
    await c.ok("send_keys", { paneId: rec.paneId, keys: ["C-c"] });
    await c.ok("send_keys", { paneId: rec.paneId, text: "x", enter: false });
    await received(rec, "\x03x");
    await c.ok("send_keys", { paneId: rec.paneId, text: "ab", keys: ["C-a", "Tab"] });
    await received(rec, "\x03xab\x01\t\r");
    await c.ok("send_keys", { paneId: rec.paneId, text: "" });
    await received(rec, "\x03xab\x01\t\r\r");
  });
});

Deno.test("text arrives exactly: Unicode, quotes, $, backticks, ;, leading -, newlines", async () => {
  await withServer(async (t, c) => {
    const rec = await recorder(t);
    const texts = [
      "日本🙂 é",
      `it's "quoted"`,
      "$HOME ${PATH} `date` $(id)",
      "a;b",
      "ends;",
      ";",
      "\\;",
      "ends\\;",
      "-x",
      "--",
      "-",
      "line1\nline2\n",
      "tab\there #{pane_id} ##",
      "C-c Enter",
    ];
    let all = "";
    for (const text of texts) {
      await c.ok("send_keys", { paneId: rec.paneId, text, enter: false });
      all += text;
      await received(rec, all);
    }
  });
});

Deno.test("key names: unknown ones are refused with a hint and nothing is sent", async () => {
  await withServer(async (t, c) => {
    const rec = await recorder(t);
    const error = await c.fail("send_keys", {
      paneId: rec.paneId,
      text: "typed",
      keys: ["Enter", "Ctrl-Cee", "F13"],
    });
    assert.match(error, /"Ctrl-Cee", "F13" are not known to tmux/);
    assert.match(error, /Key names look like C-c/);
    assert.match(await c.fail("send_keys", { paneId: rec.paneId, keys: ["C-c;"] }), /"C-c;"/);
    assert.match(
      await c.fail("send_keys", { paneId: rec.paneId, keys: ["MouseDown1Pane"] }),
      /mouse or pseudo key/,
    );
    assert.match(await c.fail("send_keys", { paneId: rec.paneId, keys: ["C c"] }), /not known/);
    // Valid names of every kind, and the cached verdicts on a second use.
    for (let round = 0; round < 2; round++) {
      await c.ok("send_keys", {
        paneId: rec.paneId,
        keys: ["Escape", "Up", "F5", "M-x", "BSpace", "Space", ";", "é", "C-M-Left"],
      });
    }
    await c.ok("send_keys", { paneId: rec.paneId, text: "END", enter: false });
    const data = new TextDecoder().decode(
      await waitFor(async () => {
        const d = await rec.read();
        return new TextDecoder().decode(d).endsWith("END") ? d : null;
      }, "END"),
    );
    assert.ok(!data.includes("typed"), "the refused call sent nothing");
    assert.ok(!data.includes("Ctrl"), "no key name arrived as text");
    assert.ok(data.includes("\x1bx"), "M-x arrived as ESC x");
    assert.ok(data.includes(" ;é"), "Space, ; and é arrived as themselves");
  });
});

Deno.test("key names tmux would type as text, drop or strip are refused, saying what to send", async () => {
  await withServer(async (t, c) => {
    const rec = await recorder(t);
    const none = await c.fail("send_keys", { paneId: rec.paneId, text: "typed", keys: ["none"] });
    assert.match(none, /"none" is a mouse or pseudo key/);
    const shifted = await c.fail("send_keys", { paneId: rec.paneId, keys: ["C-S-a", "S-a"] });
    assert.match(
      shifted,
      /"C-S-a" cannot reach a program as that key: tmux would type the text C-S-a \(a terminal's standard keys have no code for it\); send the key "C-a" instead; "S-a" .*send "A" in text instead\. Nothing was sent\./,
    );
    assert.match(shifted, /only to a program that turned on extended keys/);
    assert.match(await c.fail("send_keys", { paneId: rec.paneId, keys: ["C-1"] }), /send nothing/);
    const stripped = await c.fail("send_keys", { paneId: rec.paneId, keys: ["C-日"] });
    assert.match(stripped, /tmux would send 日 without Control; send "日" in text instead/);
    assert.doesNotMatch(stripped, /extended keys/);
    await c.ok("send_keys", {
      paneId: rec.paneId,
      keys: ["C-a", "S-Up"],
      text: "END",
      enter: false,
    });
    await received(rec, "END\x01\x1b[1;2A");
  });
});

Deno.test("send_keys refuses bad input before touching tmux", async () => {
  await withServer(async (t, c) => {
    assert.match(await c.fail("send_keys", { paneId: t.ids.paneId }), /Nothing to send/);
    assert.match(await c.fail("send_keys", { paneId: "%999", text: "x" }), /No pane %999/);
    assert.match(await c.fail("send_keys", { paneId: "nope", text: "x" }), /paneId/);
    assert.match(
      await c.fail("send_keys", { paneId: t.ids.paneId, text: "x", bogus: 1 }),
      /bogus/,
    );
    assert.match(
      await c.fail("send_keys", { paneId: t.ids.paneId, text: "é".repeat(20_000) }),
      /paste_text/,
    );
  });
});

// ---------------------------------------------------------------------------------------------
// send_keys_batch

Deno.test("send_keys_batch runs rows in order; stop skips the rest, continue does not", async () => {
  await withServer(async (t, c) => {
    const rec = await recorder(t);
    type Batch = {
      results: { index: number; status: string; error: string | null }[];
      stoppedAt: number | null;
      sent: number;
      failed: number;
      skipped: number;
    };
    const ok = await c.ok<Batch>("send_keys_batch", {
      operations: [
        { paneId: rec.paneId, text: "a", enter: false },
        { paneId: rec.paneId, keys: ["C-b"] },
        { paneId: rec.paneId, text: "c" },
      ],
    });
    assert.equal(ok.sent, 3);
    await received(rec, "a\x02c\r");

    const stopped = await c.ok<Batch>("send_keys_batch", {
      operations: [
        { paneId: rec.paneId, text: "1", enter: false },
        { paneId: rec.paneId, keys: ["NoSuchKey"] },
        { paneId: rec.paneId, text: "never", enter: false },
      ],
    });
    assert.equal(stopped.stoppedAt, 1);
    assert.deepEqual(stopped.results.map((r) => r.status), ["sent", "failed", "skipped"]);
    assert.match(stopped.results[1].error ?? "", /NoSuchKey/);

    const continued = await c.ok<Batch>("send_keys_batch", {
      operations: [
        { paneId: "%999", text: "x" },
        { paneId: rec.paneId, text: "2", enter: false },
      ],
      onError: "continue",
    });
    assert.equal(continued.stoppedAt, null);
    assert.deepEqual(continued.results.map((r) => r.status), ["failed", "sent"]);
    await received(rec, "a\x02c\r12");
  });
});

// ---------------------------------------------------------------------------------------------
// paste_text

Deno.test("paste_text pastes in one go through a buffer it deletes", async () => {
  await withServer(async (t, c) => {
    await t.tmux("set-buffer", "-b", "mine", "the person's own");
    const rec = await recorder(t);
    const text = "line 1;\nit's $HOME `x` 日本🙂\n-end;";
    const result = await c.ok<{ bytes: number; enter: boolean }>("paste_text", {
      paneId: rec.paneId,
      text,
    });
    assert.equal(result.enter, false);
    assert.equal(result.bytes, new TextEncoder().encode(text).length);
    // Like a person's paste: newlines become carriage returns; no bracketing asked for.
    await received(rec, text.replaceAll("\n", "\r"));
    assert.equal(
      (await t.tmux("list-buffers", "-F", "#{buffer_name}")).trim(),
      "mine",
      "only the person's buffer is left",
    );
    assert.equal(await t.tmux("show-buffer", "-b", "mine"), "the person's own");
    await c.ok("paste_text", { paneId: rec.paneId, text: "x", enter: true });
    await received(rec, `${text.replaceAll("\n", "\r")}x\r`);
    // One line travels on the guarded step's own command line: tmux's syntax in it is text.
    const line = `a;b ; #{pane_id} #(echo no) it's "q" \\ end;`;
    await c.ok("paste_text", { paneId: rec.paneId, text: line });
    await received(rec, `${text.replaceAll("\n", "\r")}x\r${line}`);
    // A refused paste leaves nothing behind either.
    await c.fail("paste_text", { paneId: "%999", text: "x" });
    assert.equal((await t.tmux("list-buffers", "-F", "#{buffer_name}")).trim(), "mine");
  });
});

Deno.test("paste_text: a long single line arrives whole when every command starts a tmux process", async () => {
  // Without the control channel each command line goes to a tmux process, which refuses one
  // over 16 KB: a line this long must not travel on the guarded command line.
  await withServer(async (t, c) => {
    const rec = await recorder(t);
    const line = `${"long line; #{x} ".repeat(1_250)}end`;
    assert.ok(new TextEncoder().encode(line).length > 20_000);
    await c.ok("paste_text", { paneId: rec.paneId, text: line });
    await received(rec, line);
    // Text just short enough to be filled on the guarded line itself fits a tmux process too.
    const lines = `${"x'y\"z\\ ;".repeat(80)}\n`.repeat(11);
    await c.ok("paste_text", { paneId: rec.paneId, text: lines });
    await received(rec, line + lines.replaceAll("\n", "\r"));
  }, { runner: new TmuxRunner({ control: false }) });
});

Deno.test("paste_text brackets the paste when the program asked for it", async () => {
  await withServer(async (t, c) => {
    const rec = await recorder(t, "\\033[?2004h");
    await c.ok("paste_text", { paneId: rec.paneId, text: "a\nb" });
    await received(rec, "\x1b[200~a\rb\x1b[201~");
  });
});

// A person's paste (`prefix ]`: paste-buffer -p) takes the newest buffer of any kind in tmux
// 3.3a, named ones too: the agent's transient buffer must never be the newest one while
// another client's command can run, only within the one command line that fills, pastes and
// deletes it.

/** Hostile text for tmux's parser and for quoting: quotes, `;`, formats, `$`, tabs, emoji. */
const HOSTILE = "it's \"q\" \\ \\\\ ;a; b ;\n#{pane_id} #(echo no) $HOME ~ {x} '\t'\n日本🙂 end;";

/** What a person's paste of plain text into `rec` shows: newlines as carriage returns. */
const asPasted = (text: string) => text.replaceAll("\n", "\r");

/** The person's own buffer, and a recorder standing for the person's pane. */
async function personPane(t: Server) {
  await t.tmux("set-buffer", "-b", "mine", "PERSON");
  return await recorder(t);
}

/** Asserts the person's pane received only their own buffer (at least once: the paste ran). */
async function onlyPersonText(person: { read: () => Promise<Uint8Array> }): Promise<void> {
  const got = await waitFor(async () => {
    const text = new TextDecoder().decode(await person.read());
    return text.length > 0 ? text : null;
  }, "the person's paste");
  assert.match(got, /^(PERSON)+$/, `the person's pane got ${JSON.stringify(got.slice(0, 300))}`);
}

Deno.test("paste_text: a person's paste during the fill never takes the agent's text", async () => {
  await withServer(async (t, c) => {
    const person = await personPane(t);
    const rec = await recorder(t);
    // The person presses `prefix ]` right after anything loads a buffer.
    await t.tmux("set-hook", "-g", "after-load-buffer", `paste-buffer -t ${person.paneId}`);
    const big = `${HOSTILE}\n`.repeat(100);
    assert.ok(new TextEncoder().encode(big).length > 7_000);
    let sent = "";
    for (const text of [HOSTILE, "one\ntwo", big]) {
      await c.ok("paste_text", { paneId: rec.paneId, text });
      sent += asPasted(text);
      await received(rec, sent);
    }
    // The hook does fire on a load: the person's own buffer arrives, nothing of the agent's.
    await sh("sh", [
      "-c",
      `printf PERSON | tmux -L ${t.socket} -f /dev/null load-buffer -b mine -`,
    ]);
    await onlyPersonText(person);
    assert.equal((await t.tmux("list-buffers", "-F", "#{buffer_name}")).trim(), "mine");
  });
});

Deno.test("paste_text refused by tmux at the instant: its copy is gone before anything else runs", async () => {
  await withServer(async (t, c) => {
    const person = await personPane(t);
    const rec = await recorder(t);
    // At every guard read the person pastes; at the first, the pane enters copy mode, so
    // tmux refuses the paste and the tool reads again.
    await t.tmux("set-option", "-g", "@first", "1");
    await t.tmux(
      "set-hook",
      "-g",
      "after-list-clients",
      "if-shell -F '#{m:*client_readonly*,#{hook_arguments}}' {" +
        ` paste-buffer -t ${person.paneId} ;` +
        ` if-shell -F '#{@first}' { set-option -g @first 0 ; copy-mode -t ${rec.paneId} } }`,
    );
    // Too long for the guarded line, the copy is loaded before it: the refusal deletes it.
    for (const text of ["ONE LINE", "multi\nline", `${"long; ".repeat(3_000)}\nend`]) {
      await t.tmux("set-option", "-g", "@first", "1");
      assert.match(
        await c.fail("paste_text", { paneId: rec.paneId, text }),
        /copy mode|in a mode|mode/i,
      );
      await t.tmux("send-keys", "-X", "-t", rec.paneId, "cancel");
    }
    await t.tmux("set-hook", "-gu", "after-list-clients");
    await onlyPersonText(person);
    assert.equal((await t.tmux("list-buffers", "-F", "#{buffer_name}")).trim(), "mine");
    assert.deepEqual(Array.from(await rec.read()), [], "nothing was pasted");
  });
});

Deno.test("a paste behind a shell condition: the buffer is filled only after tmux's job ran", async () => {
  // tmux runs another client's commands while an if-shell (without -F) waits for its job: the
  // condition itself stands in for a person pressing `prefix ]` at that moment.
  await withServer(async (t) => {
    const person = await personPane(t);
    const rec = await recorder(t);
    const runner = new TmuxRunner();
    const ctx = new TmuxContext(
      runner,
      { address: { socketName: t.socket }, callerEnv: {}, maxResultBytes: MAX_RESULT_BYTES },
      undefined,
      new AbortController().signal,
      () => Promise.resolve(),
    );
    try {
      const snapshot = await ctx.guardSnapshot(rec.paneId);
      const pane = ctx.pane(snapshot, rec.paneId);
      const name = "tmux-mcp-transient";
      const reached = await deliverInput(
        ctx,
        snapshot,
        pane,
        {
          paste: true,
          shellConditions: [{
            target: rec.paneId,
            format: `tmux -L ${t.socket} -f /dev/null paste-buffer -t ${person.paneId}; true`,
            shell: true,
          }],
        },
        [["paste-buffer", "-b", name, "-d", "-t", rec.paneId]],
        [["set-buffer", "-b", name, "--", HOSTILE]],
      );
      assert.deepEqual(reached, [rec.paneId]);
      await received(rec, asPasted(HOSTILE));
      await onlyPersonText(person);
    } finally {
      await runner.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// run_command

type Run = {
  exitStatus: number | null;
  output: string;
  outputComplete: boolean;
  omittedBytes: number;
  timedOut: boolean;
  stillRunning: boolean;
  paneDied: boolean;
  effectiveTimeoutMs: number;
  timeoutClamped: boolean;
  transport: string;
};

/** Runs a command once the pane is free of an earlier one (each try is a real call). */
async function runWhenFree(
  c: TestClient,
  paneId: string,
  command: string,
  extra: Record<string, unknown> = {},
): Promise<Run> {
  return await waitFor(
    async () => {
      const r = await c.call("run_command", { paneId, command, ...extra });
      return r.isError ? null : r.structuredContent as Run;
    },
    "the pane to be free",
    10_000,
  );
}

Deno.test("run_command returns output and exit status, 0 and non-zero", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const ok = await c.ok<Run>("run_command", { paneId: p, command: "echo hello world" });
    assert.equal(ok.exitStatus, 0);
    assert.equal(ok.output, "hello world");
    assert.equal(ok.timedOut, false);
    assert.equal(ok.stillRunning, false);
    assert.equal(ok.effectiveTimeoutMs, 30_000);
    assert.equal(ok.transport, "control");

    const bad = await c.ok<Run>("run_command", { paneId: p, command: "echo oops >&2; (exit 3)" });
    assert.equal(bad.exitStatus, 3);
    assert.equal(bad.output, "oops");

    const silent = await c.ok<Run>("run_command", { paneId: p, command: "false" });
    assert.equal(silent.exitStatus, 1);
    assert.equal(silent.output, "");

    const partial = await c.ok<Run>("run_command", { paneId: p, command: "printf 'no newline'" });
    assert.equal(partial.output, "no newline");
    assert.equal(partial.exitStatus, 0);

    // The command runs in the pane's own shell: state stays.
    await c.ok("run_command", { paneId: p, command: "cd /tmp && export MCP_T=kept" });
    const pwd = await c.ok<Run>("run_command", { paneId: p, command: 'echo "$(pwd) $MCP_T"' });
    assert.equal(pwd.output, "/tmp kept");
  });
});

Deno.test("run_command: special characters and multi-line commands arrive exactly", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const special = await c.ok<Run>("run_command", {
      paneId: p,
      command:
        `printf '%s\\n' "it's" '$HOME' '\`bt\`' 'a;' ';' '-x' '日本🙂' 'back\\slash' '!!' '#x'`,
    });
    assert.equal(special.output, "it's\n$HOME\n`bt`\na;\n;\n-x\n日本🙂\nback\\slash\n!!\n#x");
    assert.equal(special.exitStatus, 0);

    const multi = await c.ok<Run>("run_command", {
      paneId: p,
      command: "for i in 1 2 3\ndo\n  echo \"n$i\"\ndone\ncat <<'EOF'\nhere\tdoc $x\nEOF\n(exit 4)",
    });
    assert.equal(multi.output, "n1\nn2\nn3\nhere    doc $x");
    assert.equal(multi.exitStatus, 4);

    // Longer than a shell without line editing reads in one line (dash: 4095 bytes).
    const long = "x".repeat(3_000) + "'\"$;".repeat(500);
    const big = await c.ok<Run>("run_command", {
      paneId: p,
      command: `v='${long.replaceAll("'", "'\\''")}'; echo "\${#v}"`,
    });
    assert.equal(big.output, String(long.length));
    assert.equal(big.exitStatus, 0);
  });
});

Deno.test("run_command: the echo-marker trap — text that looks like the markers", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    // Fake markers of every shape, printed and in the command's own (echoed) text; the real
    // markers carry a fresh random nonce per call, and the echo never holds them whole.
    const command = [
      "echo __tmcp_0000_B",
      "echo __tmcp_0000_E:0",
      "printf '%s_%s_E:%s\\n' __tmcp 0000 9",
      "echo 'printf %s_%s_B __tmcp'",
      "sleep 0.3",
      "echo real end",
      "(exit 6)",
    ].join("; ");
    const result = await c.ok<Run>("run_command", { paneId: p, command });
    assert.equal(result.exitStatus, 6);
    assert.equal(
      result.output,
      "__tmcp_0000_B\n__tmcp_0000_E:0\n__tmcp_0000_E:9\nprintf %s_%s_B __tmcp\nreal end",
    );
  });
});

Deno.test("run_command: a command outliving its timeout keeps the pane busy until it ends", async () => {
  await using gate = await ShellGate.make();
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    for (const ending of ["by itself", "interrupted"]) {
      // Ends by itself once told to, not after a second or two, which the refusal below may
      // take to come on a loaded machine.
      const slow = await c.ok<Run>("run_command", {
        paneId: p,
        command: ending === "by itself"
          ? `echo started; ${gate.wait}; echo finished`
          : "echo started; sleep 100",
        timeoutMs: 800,
      });
      assert.equal(slow.timedOut, true);
      assert.equal(slow.stillRunning, true);
      assert.equal(slow.exitStatus, null);
      assert.equal(slow.output, "started", "what it printed so far");
      assert.equal(slow.effectiveTimeoutMs, 800);

      const refused = await c.fail("run_command", { paneId: p, command: "true" });
      assert.match(refused, /still running an earlier run_command/);
      assert.match(refused, /C-c/);
      assert.match(refused, /if C-c does not end it, respawn_pane with kill: true/);
      if (ending === "interrupted") {
        // send_keys is not blocked by a busy pane: the model may answer a prompt or interrupt.
        // (Once sleep holds the terminal: see leaks_test's C-c.)
        await t.foreground(p, "sleep");
        await c.ok("send_keys", { paneId: p, keys: ["C-c"] });
      } else await gate.open();
      const next = await runWhenFree(c, p, "echo next");
      assert.equal(next.output, "next");
      assert.equal(next.exitStatus, 0);
    }
  });
});

Deno.test("run_command: timeouts are clamped into [100 ms, 120 s] and reported", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const low = await c.ok<Run>("run_command", { paneId: p, command: "sleep 0.5", timeoutMs: 1 });
    assert.equal(low.effectiveTimeoutMs, 100);
    assert.equal(low.timeoutClamped, true);
    assert.equal(low.timedOut, true);
    const high = await runWhenFree(c, p, "true", { timeoutMs: 10_000_000 });
    assert.equal(high.effectiveTimeoutMs, 120_000);
    assert.equal(high.timeoutClamped, true);
    assert.equal(high.exitStatus, 0);
    const negative = await c.ok<Run>("run_command", { paneId: p, command: "true", timeoutMs: -5 });
    assert.equal(negative.effectiveTimeoutMs, 100);
  });
});

Deno.test("run_command refuses panes that are not at a POSIX shell", async () => {
  await withServer(async (t, c) => {
    const catPane = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "cat")).trim();
    await foreground(t, catPane, "cat");
    const notShell = await c.fail("run_command", { paneId: catPane, command: "true" });
    assert.match(notShell, /running "cat", not a shell/);
    assert.match(notShell, /C-c/);

    // A shell named like a non-POSIX one (a copy of sh called fish).
    const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-fish-" });
    try {
      await Deno.copyFile("/bin/sh", `${dir}/fish`);
      await Deno.chmod(`${dir}/fish`, 0o755);
      const fishPane = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", `${dir}/fish`))
        .trim();
      await foreground(t, fishPane, "fish");
      const fish = await c.fail("run_command", { paneId: fishPane, command: "true" });
      assert.match(fish, /runs fish, which is not a POSIX shell/);
      assert.match(fish, /send_keys and wait_for_text/);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }

    // A busy shell: a program in the foreground is not a prompt.
    await c.ok("send_keys", { paneId: t.ids.paneId, text: "sleep 100" });
    await waitFor(async () => (await currentCommand(t, t.ids.paneId)) === "sleep", "sleep");
    assert.match(
      await c.fail("run_command", { paneId: t.ids.paneId, command: "true" }),
      /running "sleep", not a shell/,
    );
  });
});

/**
 * Five run_command calls in a row in a bash pane started with `env` (its prompt's settings):
 * each C-c run_command sends makes the shell draw its prompt again, running the program in it.
 */
async function fiveInARow(t: Server, c: TestClient, env: string): Promise<void> {
  const pane = await t.showing(`env ${env} bash --norc --noprofile -i`, "p$");
  for (let i = 0; i < 5; i++) {
    const r = await c.ok<{ output: string; exitStatus: number }>("run_command", {
      paneId: pane,
      command: `echo "run ${i}"; false`,
      timeoutMs: 10_000,
    });
    assert.equal(r.output, `run ${i}`);
    assert.equal(r.exitStatus, 1);
  }
}

Deno.test("run_command: a $(...) in PS1 that runs a program does not refuse the typing", async () => {
  await withServer(async (t, c) => {
    await fiveInARow(t, c, `'PS1=$(sleep 0.2)p$ '`);
  });
});

Deno.test("run_command: a PROMPT_COMMAND that runs a program does not refuse the typing", async () => {
  await withServer(async (t, c) => {
    await fiveInARow(t, c, `'PROMPT_COMMAND=sleep 0.05' 'PS1=p$ '`);
  });
});

Deno.test("run_command: a prompt command that does not end is named in the refusal", async () => {
  await withServer(async (t, c) => {
    const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-slow-prompt-" });
    try {
      // The prompt is quick until the file exists; then drawing it never ends.
      const pane = await t.showing(
        `env 'PROMPT_COMMAND=[ -e ${dir}/slow ] && sleep 600' 'PS1=p$ ' bash --norc --noprofile -i`,
        "p$",
      );
      await Deno.writeTextFile(`${dir}/slow`, "");
      const refusal = await c.fail("run_command", {
        paneId: pane,
        command: "echo never",
        timeoutMs: 500,
      });
      assert.match(refusal, /a prompt command may still be running/, refusal);
      assert.match(refusal, /Nothing was typed/);
      assert.doesNotMatch(await t.tmux("capture-pane", "-p", "-t", pane), /never/);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("run_command: a nested interactive shell is named, with exit as the way back", async () => {
  await withServer(async (t, c) => {
    const pane = await t.showing("env 'PS1=outer$ ' bash --norc --noprofile -i", "outer$");
    await c.ok("send_keys", { paneId: pane, text: "PS1='inner$ ' bash --norc --noprofile -i" });
    await waitFor(
      async () => (await t.tmux("capture-pane", "-p", "-t", pane)).trimEnd().endsWith("inner$"),
      "the inner prompt",
    );
    const refusal = await c.fail("run_command", { paneId: pane, command: "echo inside" });
    assert.match(refusal, /a shell it started \(bash\) holds the terminal/, refusal);
    assert.match(refusal, /nested interactive shell/);
    assert.match(refusal, /"exit"/);
    assert.match(refusal, /Nothing was typed/);
    // Leaving it gives the pane's own shell back to run_command.
    await c.ok("send_keys", { paneId: pane, text: "exit" });
    const r = await c.ok<{ output: string }>("run_command", {
      paneId: pane,
      command: "echo outside",
      timeoutMs: 10_000,
    });
    assert.equal(r.output, "outside");
  });
});

Deno.test("run_command right after send_keys waits for the shell to take the terminal back", async () => {
  await withServer(async (t, c) => {
    const pane = await t.showing("env 'PS1=ready$ ' bash --norc --noprofile -i", "ready$");
    const named = async () =>
      (await t.tmux("display-message", "-p", "-t", pane, "#{pane_current_command}")).trim();
    // An `exit` of a nested shell: until the pane's shell takes the terminal back, its
    // foreground group is a dead one, and tmux names the pane's start command (`env`).
    await c.ok("send_keys", { paneId: pane, text: "bash --norc --noprofile" });
    await waitFor(async () => (await named()) === "bash", "the nested shell");
    await c.ok("send_keys", { paneId: pane, text: "exit" });
    const r = await c.ok<{ output: string }>("run_command", {
      paneId: pane,
      command: "echo after",
      timeoutMs: 10_000,
    });
    assert.equal(r.output, "after");
    // The same, held until run_command is on its way: a job whose group leader is gone, its
    // last process ending only when the test lets it (a loaded machine sees the state at once).
    // The leader is the shell's fork for a builtin, which ends without an exec: while a
    // program execs, its command line reads empty for a moment, and tmux names the start
    // command then too, before it names the program (`sleep 0` was seen so on a loaded machine).
    await using gate = await ShellGate.make();
    await c.ok("send_keys", {
      paneId: pane,
      text: `true | ${gate.wait}`,
    });
    await waitFor(async () => (await named()) === "env", "the dead group named as the start");
    const called = c.ok<{ output: string; exitStatus: number }>("run_command", {
      paneId: pane,
      command: "echo again",
      timeoutMs: 10_000,
    });
    await gate.open();
    const again = await called;
    assert.equal(again.output, "again");
    assert.equal(again.exitStatus, 0);
  });
});

Deno.test("parseWindowName names a start command as tmux does", () => {
  for (
    const [line, name] of [
      [`"env 'PS1=ready$ ' bash --norc --noprofile -i"`, "env"],
      [`/usr/bin/env "A=b c" bash`, "env"],
      ["exec -bash", "bash"],
      ["  /bin/sh -c 'x'", "sh"],
      ["python3", "python3"],
    ]
  ) assert.equal(parseWindowName(line), name, line);
});

Deno.test("run_command right after send_keys started a program refuses at once", async () => {
  await withServer(async (t, c) => {
    const pane = await t.showing("env 'PS1=ready$ ' bash --norc --noprofile -i", "ready$");
    // Once cat runs, and while the shell still runs a loop (0.3 s) before it: then tmux names
    // the shell, whose C-c is refused (busy) until cat takes the terminal.
    const loop = "e=$((${EPOCHREALTIME/./}+300000)); " +
      "while [ ${EPOCHREALTIME/./} -lt $e ]; do :; done; cat";
    for (const text of ["cat", loop]) {
      await c.ok("send_keys", { paneId: pane, text });
      if (text === "cat") await t.foreground(pane, "cat");
      // The loop, once bash has taken its line (the cursor left it for the row below): a C-c
      // before that would find bash at its prompt and drop the line instead.
      else await lineTaken(t, pane, "done; cat");
      const began = performance.now();
      const refusal = await c.fail("run_command", { paneId: pane, command: "echo n''o" });
      const took = performance.now() - began;
      assert.match(refusal, /"cat"|not what reads the keyboard/);
      // Not the 2 s a prompt program is given after run_command's own end.
      assert.ok(took < 1_500, `refused after ${Math.round(took)} ms: ${refusal}`);
      await t.foreground(pane, "cat");
      await c.ok("send_keys", { paneId: pane, keys: ["C-d"] });
      await waitFor(
        async () =>
          (await t.tmux("display-message", "-p", "-t", pane, "#{pane_current_command}"))
            .trim() === "bash",
        "cat to end",
      );
    }
  });
});

Deno.test("run_command reports a pane whose shell exits while the command runs", async () => {
  await withServer(async (t, c) => {
    await t.tmux("set-option", "-g", "remain-on-exit", "on");
    const p = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
    // Its prompt, not its name: tmux names a pane's start command before the shell even runs
    // (see foreground), and run_command's C-c would end a shell that has not yet set up its
    // signals.
    await t.prompt(p);
    const { summary, data: result } = await summaryOf(c, "run_command", {
      paneId: p,
      command: "echo bye; exit 5",
    }) as { summary: string; data: Run };
    assert.equal(result.paneDied, true);
    // tmux 3.3a sometimes never learns a dead pane's exit status (pane_dead_status stays
    // empty): then it is null, never a wrong number.
    assert.ok(result.exitStatus === 5 || result.exitStatus === null, `${result.exitStatus}`);
    assert.equal(result.stillRunning, false);
    // What the shell printed last is lost when tmux learns of its exit before reading it (a
    // loaded machine; see the next test): all of it or none, here.
    assert.match(result.output, /^(bye)?$/);
    assert.equal(result.outputComplete, false);
    assert.match(summary, /shell exited while the command ran/);
    assert.match(summary, /may be missing/);
    assert.match(await c.fail("run_command", { paneId: p, command: "true" }), /is dead/);
  });
});

Deno.test("run_command: a shell that exits while tmux is held up: the reply says its output may miss its last lines", async () => {
  await withServer(async (t, c) => {
    await t.tmux("set-option", "-g", "remain-on-exit", "on");
    const p = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
    await t.prompt(p);
    const [tmuxPid, shellPid] =
      (await t.tmux("display-message", "-p", "-t", p, "#{pid} #{pane_pid}"))
        .trim().split(" ").map(Number);
    await using gate = await ShellGate.make();
    const called = summaryOf(c, "run_command", {
      paneId: p,
      command: `echo before; ${gate.wait}; echo last; exit 5`,
      timeoutMs: 30_000,
    }) as Promise<{ summary: string; data: Run }>;
    // Its first line out (a row of its own: the typed line's echo holds it too)...
    await waitFor(
      async () => /^before$/m.test(await t.tmux("capture-pane", "-p", "-t", p)),
      "the command's first line",
    );
    // ...then its last line and its exit while tmux is stopped (a busy machine's moment): once
    // it runs again, it learns of the exit (SIGCHLD) and closes the pane's terminal.
    Deno.kill(tmuxPid, "SIGSTOP");
    try {
      await gate.open();
      const state = async () => {
        const stat = await Deno.readTextFile(`/proc/${shellPid}/stat`);
        return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
      };
      await waitFor(async () => (await state()) === "Z", "the shell exited, unreaped");
    } finally {
      Deno.kill(tmuxPid, "SIGCONT");
    }
    const { summary, data } = await called;
    assert.equal(data.paneDied, true, summary);
    assert.match(data.output, /^before$/m, "what tmux read is there");
    // What tmux had not read when it learnt of the exit (`last`) is dropped, or was read first
    // (its events' order, not ours): the reply cannot tell, and says so.
    assert.equal(data.outputComplete, false);
    assert.match(summary, /What it printed last may be missing/);
  });
});

Deno.test("run_command: a pane gone with its shell leaves output incomplete, not empty and whole", async () => {
  await withServer(async (t, c) => {
    const p = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
    await t.prompt(p);
    const { summary, data: result } = await summaryOf(c, "run_command", {
      paneId: p,
      command: "echo bye; exit 7",
    });
    assert.equal(result.paneDied, true);
    assert.equal(result.output, "");
    assert.equal(result.outputComplete, false, "the output went with the pane");
    assert.match(summary, /the pane is gone: it closed while the command ran/);
    // A pane closed by a kill of its session (the command's own `tmux kill-session`) reads the
    // same: not as a shell that exited of itself.
    await t.tmux("new-session", "-d", "-s", "spare", "sh");
    const own = (await t.tmux("new-session", "-d", "-P", "-F", "#{pane_id}", "-s", "doomed", "sh"))
      .trim();
    await t.prompt(own);
    const killed = await summaryOf(c, "run_command", { paneId: own, command: "tmux kill-session" });
    assert.equal(killed.data.paneDied, true);
    assert.match(
      killed.summary,
      /the pane is gone: it closed while the command ran \(its shell exited, or the pane, its window or its session was killed\)/,
    );
  });
});

Deno.test("run_command: a shell waiting at a prompt without the markers is not reported busy", async () => {
  await withServer(async (t, c) => {
    const p =
      (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "bash --norc --noprofile"))
        .trim();
    await t.prompt(p);
    // A shell that ignores C-c keeps an unclosed quote: the command typed joins the string.
    await t.tmux("send-keys", "-t", p, "-l", "trap '' INT");
    await t.tmux("send-keys", "-t", p, "Enter");
    await t.tmux("send-keys", "-t", p, "-l", 'echo "abc');
    await t.tmux("send-keys", "-t", p, "Enter");
    await waitFor(
      async () => /^> ?$/m.test(await t.tmux("capture-pane", "-p", "-t", p)),
      "the continuation prompt",
    );
    const r = await c.call("run_command", { paneId: p, command: "echo clean", timeoutMs: 3_000 });
    const result = r.structuredContent as Run;
    assert.equal(result.exitStatus, null);
    assert.equal(result.stillRunning, false, JSON.stringify(result));
    const text = (r.content as { text: string }[])[0].text;
    assert.match(text, /never started|did not start/, text);
    // The pane is not held busy by a command that is not running.
    await t.tmux("send-keys", "-t", p, "-l", '"');
    await t.tmux("send-keys", "-t", p, "Enter");
    const next = await c.ok<Run>("run_command", { paneId: p, command: "echo next" });
    assert.equal(next.output, "next");
  });
});

Deno.test("run_command: a command that began and waits in the shell itself (read) is still running", async () => {
  await withServer(async (t, c) => {
    const p =
      (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "bash --norc --noprofile"))
        .trim();
    await t.prompt(p);
    // The shell itself waits in `read`: as quiet as at its prompt, but the command runs.
    const r = await c.ok<Run & { jobId: string }>("run_command", {
      paneId: p,
      command: "read x; echo got $x",
      timeoutMs: 1_000,
    });
    assert.equal(r.timedOut, true);
    assert.equal(r.stillRunning, true, JSON.stringify(r));
    await t.tmux("send-keys", "-t", p, "-l", "answer");
    await t.tmux("send-keys", "-t", p, "Enter");
    const done = await c.ok<{ state: string; exitStatus: number; output: string }>(
      "get_command_result",
      { jobId: r.jobId, waitMs: 5_000 },
    );
    assert.deepEqual([done.state, done.exitStatus, done.output], [
      "exited",
      0,
      "answer\ngot answer",
    ]);
    // A history that cannot grow (limit 0): once the cursor is on the bottom row, the new
    // prompt shows as the rows scrolling (each call leaves several rows).
    await t.tmux("set-option", "-p", "-t", p, "history-limit", "0");
    for (let i = 0; i < 30; i++) {
      const run = await c.ok<Run>("run_command", { paneId: p, command: `echo line-${i}` });
      assert.equal(run.output, `line-${i}`);
    }
  });
});

Deno.test("run_command: output whose cursor moves above its start is never earlier output, and says so", async () => {
  await withServer(async (t, c) => {
    const p =
      (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "bash --norc --noprofile"))
        .trim();
    await t.prompt(p);
    await c.ok<Run>("run_command", { paneId: p, command: "echo EARLIER-OUTPUT" });
    // The cursor goes back up over the begin marker: the end marker is printed over it.
    const over = await c.ok<Run>("run_command", {
      paneId: p,
      command: "printf 'one\\ntwo\\n\\033[3A'",
    });
    assert.equal(over.exitStatus, 0);
    assert.doesNotMatch(over.output, /EARLIER-OUTPUT|__tmcp/, over.output);
    assert.equal(over.outputComplete, false);
    // The end marker is printed over the command's own output, and a line stays below it.
    const under = await c.ok<Run>("run_command", {
      paneId: p,
      command: "printf 'a\\nb\\nc\\nd\\n\\033[3A'",
    });
    assert.equal(under.exitStatus, 0);
    assert.equal(under.outputComplete, false, JSON.stringify(under));
  });
});

Deno.test("run_command: rows below the cursor at the end move down, not under the end marker", async () => {
  await withServer(async (t, c) => {
    const p =
      (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "bash --norc --noprofile"))
        .trim();
    await t.prompt(p);
    // Room below: the rows are kept on screen, below the prompt.
    await t.tmux("resize-window", "-t", p, "-y", "200");
    // Two rows up from the end of its output: the end marker and the prompt went over them.
    const two = await c.ok<Run>("run_command", {
      paneId: p,
      command: "printf 'a\\nb\\nc\\nd\\n\\033[2A'",
    });
    assert.equal(two.exitStatus, 0);
    assert.equal(two.output, "a\nb\nc", JSON.stringify(two));
    assert.equal(two.outputComplete, false, JSON.stringify(two));
    assert.match(await t.tmux("capture-pane", "-p", "-t", p), /^d$/m);
    // Back to the start of its last line: the end marker went over that line.
    const one = await c.ok<Run>("run_command", {
      paneId: p,
      command: "printf 'a\\nb\\nc\\nd\\n\\033[A'",
    });
    assert.equal(one.output, "a\nb\nc\nd", JSON.stringify(one));
    assert.equal(one.outputComplete, true, JSON.stringify(one));
  });
});

Deno.test("run_command bounds a large output, keeping its tail", async () => {
  await withServer(async (t, c) => {
    await t.tmux("set-option", "-g", "history-limit", "5000");
    const p = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
    await t.prompt(p);
    const result = await c.ok<Run>("run_command", {
      paneId: p,
      command: 'i=0; while [ $i -lt 600 ]; do echo "line $i of the output"; i=$((i+1)); done',
    });
    assert.equal(result.exitStatus, 0);
    assert.equal(result.outputComplete, false);
    assert.ok(result.omittedBytes > 0);
    assert.ok(result.output.endsWith("line 599 of the output"));
    assert.ok(new TextEncoder().encode(JSON.stringify(result)).length <= 8_000);
  }, { maxResultBytes: 8_000 });
});

Deno.test("run_command refuses a synchronized window", async () => {
  await withServer(async (t, c) => {
    await t.tmux("split-window", "-d", "-t", t.ids.paneId, "sh");
    await t.tmux("set-option", "-w", "-t", t.ids.windowId, "synchronize-panes", "on");
    assert.match(
      await c.fail("run_command", { paneId: t.ids.paneId, command: "true" }),
      /synchronize-panes on/,
    );
  });
});

Deno.test("toolsets decide which of these tools exist", async () => {
  const t = await TestTmux.start();
  const c = await connect({ socketName: t.socket, toolsets: ["inspect"] });
  try {
    const names = (await c.client.listTools()).tools.map((tool: { name: string }) => tool.name);
    assert.ok(names.includes("wait_for_text"), "waiting is inspect");
    for (const name of ["send_keys", "send_keys_batch", "paste_text", "run_command"]) {
      assert.ok(!names.includes(name), `${name} is execute`);
      assert.equal(c.server.registry.get(name), undefined);
      const result = await c.call(name, { paneId: t.ids.paneId, text: "x", command: "x" });
      assert.equal(result.isError, true, `${name} cannot be called`);
    }
    assert.ok(!(await t.tmux("capture-pane", "-p", "-t", t.ids.paneId)).includes("x"));
  } finally {
    await c.close();
    await t.kill();
  }
});

Deno.test("run_command finds its output when tmux trims the history meanwhile", async () => {
  await withServer(async (t, c) => {
    await t.tmux("set-option", "-g", "history-limit", "1000");
    const p = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
    await t.prompt(p);
    // Fill the history to just below its limit: the command's output crosses it, and tmux
    // drops the oldest 10% at once, moving every row up.
    await c.ok("run_command", { paneId: p, command: "seq 1 990" });
    const shifted = await c.ok<Run>("run_command", { paneId: p, command: "seq -f 'out %g' 1 200" });
    assert.equal(shifted.exitStatus, 0);
    assert.equal(shifted.outputComplete, true);
    assert.equal(shifted.output.split("\n").length, 200);
    assert.ok(shifted.output.startsWith("out 1\nout 2\n"));
    // More output than the history holds: its start is gone, and the result says so.
    const lost = await c.ok<Run>("run_command", { paneId: p, command: "seq -f 'big %g' 1 1500" });
    assert.equal(lost.exitStatus, 0);
    assert.equal(lost.outputComplete, false);
    assert.ok(lost.output.endsWith("big 1499\nbig 1500"));
    assert.ok(!lost.output.includes("big 1\n"));
  });
});

Deno.test("run_command: a command that clears the screen and history returns what it printed since, and says so", async () => {
  await withServer(async (t, c) => {
    const p = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
    await t.prompt(p);
    await c.ok("run_command", { paneId: p, command: "echo before" });
    // What `clear` sends where the terminal can empty its history: home, erase the screen,
    // erase the history. The begin marker and the typed line go with them.
    for (const clear of ["printf '\\033[H\\033[2J\\033[3J'", "clear"]) {
      const result = await c.call("run_command", {
        paneId: p,
        command: `echo gone; ${clear}; echo TESTS PASSED: 12; echo FAILED: 3`,
      });
      const run = result.structuredContent as Run;
      const text = (result.content as { text: string }[])[0].text;
      assert.equal(run.exitStatus, 0, clear);
      assert.equal(run.output, "TESTS PASSED: 12\nFAILED: 3", `${clear}: ${text}`);
      assert.equal(run.outputComplete, false, clear);
      assert.match(text, /cleared the screen and the pane's history/, clear);
      // Read again as a job: the same.
      const next = await c.ok<Run>("run_command", { paneId: p, command: "echo after" });
      assert.equal(next.output, "after");
    }
  });
});

Deno.test("run_command: output longer than the pane's history says its start left, and how to keep it", async () => {
  await withServer(async (t, c) => {
    await t.tmux("set-option", "-g", "history-limit", "1000");
    const p = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
    await t.prompt(p);
    const result = await c.call("run_command", {
      paneId: p,
      command: "seq -f 'CC obj/file%g.o' 1 5000; false",
    });
    const run = result.structuredContent as Run;
    const text = (result.content as { text: string }[])[0].text;
    assert.equal(run.exitStatus, 1);
    assert.equal(run.outputComplete, false);
    assert.equal(run.omittedBytes, 0, "all the pane holds fits the reply");
    assert.ok(run.output.endsWith("CC obj/file5000.o"));
    assert.match(text, /scrolled out of the pane's history \(history-limit 1000 lines\)/, text);
    assert.match(text, /2>&1 \| tee FILE/);
    assert.match(text, /set_option history-limit/);
    // A command whose output fits says nothing of it.
    const small = await c.call("run_command", { paneId: p, command: "seq 1 3" });
    assert.doesNotMatch((small.content as { text: string }[])[0].text, /history-limit/);
  });
});

Deno.test("run_command: output whose start scrolled off a screen that keeps no history says so, not that it cleared it", async () => {
  await withServer(async (t, c) => {
    const shell = async () => {
      const p = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
      await t.prompt(p);
      return p;
    };
    // A shell left on the alternate screen (a full-screen program that died without leaving
    // it, or `tput smcup`): that screen keeps no history.
    const alternate = await shell();
    await t.tmux("send-keys", "-t", alternate, "printf '\\033[?1049h'", "Enter");
    await waitFor(
      async () =>
        (await t.tmux("display-message", "-p", "-t", alternate, "#{alternate_on}")).trim() ===
          "1",
      "the alternate screen",
    );
    // A pane made with history-limit 0 keeps none either.
    await t.tmux("set-option", "-g", "history-limit", "0");
    const none = await shell();
    for (const [p, why] of [[alternate, /alternate screen/], [none, /history-limit 0/]] as const) {
      const result = await c.call("run_command", { paneId: p, command: "seq 1 100" });
      const run = result.structuredContent as Run;
      const text = (result.content as { text: string }[])[0].text;
      assert.equal(run.exitStatus, 0, text);
      assert.equal(run.outputComplete, false, text);
      assert.ok(run.output.endsWith("99\n100"), text);
      assert.doesNotMatch(text, /cleared the screen and the pane's history/, text);
      assert.match(text, /scrolled off a screen that keeps no history/, text);
      assert.match(text, why, text);
      assert.match(text, /2>&1 \| tee FILE/, text);
    }
  });
});

Deno.test("run_command: a cancelled call leaves its command running and the pane busy", async () => {
  await using gate = await ShellGate.make();
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const abort = new AbortController();
    // It runs until told to end, however long the calls below take on a loaded machine.
    const command = `${gate.wait}; echo after`;
    const call = c.client.callTool(
      { name: "run_command", arguments: { paneId: p, command } },
      undefined,
      { signal: abort.signal },
    );
    call.catch(() => {});
    await waitFor(async () => (await currentCommand(t, p)) === "sleep", "the command to run");
    abort.abort();
    await assert.rejects(call);
    await c.server.registry.settle(3_000);
    assert.match(await c.fail("run_command", { paneId: p, command: "true" }), /still running/);
    await gate.open();
    const next = await runWhenFree(c, p, "echo again");
    assert.equal(next.output, "again");
  });
});

const BASH = ["/bin/bash", "/usr/bin/bash"].find((path) => {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
});

Deno.test({
  name: "run_command in bash: history expansion is inert and the leading space keeps it out",
  ignore: BASH === undefined,
  async fn() {
    const t = await TestTmux.start("main", { command: `${BASH} --norc --noprofile -i` });
    const c = await connect({ socketName: t.socket });
    try {
      const p = t.ids.paneId;
      await t.prompt(p);
      // Recorded itself (the setting takes effect after this line), then nothing more is.
      await c.ok("run_command", { paneId: p, command: "HISTCONTROL=ignorespace; set -o history" });
      const bang = await c.ok<Run>("run_command", { paneId: p, command: "echo 'a!b' \"c!!\" !x" });
      assert.equal(bang.output, "a!b c!! !x");
      await c.ok("run_command", { paneId: p, command: "echo secret-word" });
      const history = await c.ok<Run>("run_command", { paneId: p, command: "history" });
      assert.match(history.output, /HISTCONTROL/);
      assert.ok(!history.output.includes("secret-word"), history.output);
      const multi = await c.ok<Run>("run_command", {
        paneId: p,
        command: 'f() {\n  echo "in f: $1"\n}\nf one; (exit 2)',
      });
      assert.equal(multi.output, "in f: one");
      assert.equal(multi.exitStatus, 2);
    } finally {
      await c.close();
      await t.kill();
    }
  },
});

Deno.test("send_keys: long text with newlines arrives whole over the control connection", async () => {
  await withServer(async (t, c) => {
    const rec = await recorder(t);
    const text = "a".repeat(17_000) + "\nZ\n\nend";
    await c.ok("send_keys", { paneId: rec.paneId, text, enter: false });
    await received(rec, text);
  });
});

Deno.test("send_keys: text too long for a tmux process's arguments arrives whole on its stdin", async () => {
  // Without the control channel each command line goes to a tmux process, whose arguments take
  // 16 KB at most: a longer guarded line goes to it as a file on its stdin.
  await withServer(async (t, c) => {
    const rec = await recorder(t);
    const text = "x'".repeat(10_000) + "\nZ";
    await c.ok("send_keys", { paneId: rec.paneId, text, enter: false });
    await c.ok("send_keys", { paneId: rec.paneId, text: "after", enter: false });
    await received(rec, text + "after");
  }, { runner: new TmuxRunner({ control: false }) });
});

Deno.test("run_command's C-c for a fresh prompt asks tmux for one shell test, not two", async () => {
  const runner = new RecordingRunner({ control: false });
  await withServer(async (t, c) => {
    const r = await c.ok<{ output: string }>("run_command", {
      paneId: t.ids.paneId,
      command: "echo o''ne",
    });
    assert.equal(r.output, "one");
    // Whether the shell holds its terminal and is not busy itself: one /bin/sh for both.
    const step = runner.started.find((a) => a.some((w) => /\bC-c\b/.test(w)));
    assert.ok(step !== undefined, "the guarded C-c");
    // Each shell test opens with a look at the shell's stat file (foreground.ts).
    const shells = step.join(" ").match(/if \[ -r \/proc\/\d+\/stat \]/g) ?? [];
    assert.equal(shells.length, 1, step.join(" "));
  }, { runner });
});

// ---------------------------------------------------------------------------------------------
// One run_command at a time in a pane, whoever calls

function textOf(r: { content?: unknown }): string {
  return (r.content as { text: string }[] | undefined)?.[0]?.text ?? "";
}

/** Begin markers in the pane's whole history: each run_command line that began. */
async function begun(t: TestTmux, paneId: string): Promise<number> {
  const rows = await t.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", paneId);
  return (rows.match(/__tmcp_[0-9a-f]{20}_B$/gm) ?? []).length;
}

/** The pane's run mark, "" when none. */
async function runMark(t: TestTmux, paneId: string): Promise<string> {
  return (await t.tmux("display-message", "-p", "-t", paneId, "#{@tmux-mcp-run}")).trim();
}

/**
 * Two run_command calls into one pane at once, from `a` and `b` (one server twice, or two),
 * each a `read` that waits for an answer only the test gives. Whichever call takes the pane
 * holds it until answered, so the first reply is the other's refusal, naming the pane's
 * command as `named` says; then the answer goes in, and the call that holds the pane reads
 * exactly it, never the other's typed line.
 */
async function runTogether(
  t: TestTmux,
  paneId: string,
  a: { call: (name: string, args: Record<string, unknown>) => Promise<{ content?: unknown }> },
  b: typeof a,
  round: number,
  named: (winner: string) => RegExp,
): Promise<void> {
  const before = await begun(t, paneId);
  const command = (who: string) => `read -r ans; echo "${who}${round} got [$ans]"`;
  const calls = [a, b].map((c, i) =>
    c.call("run_command", { paneId, command: command("AB"[i]), timeoutMs: 60_000 })
      .then((r) => ({
        r: r as { content?: unknown; isError?: boolean } & Record<string, unknown>,
        i,
      }))
  );
  const first = await Promise.race(calls);
  const winner = "AB"[1 - first.i];
  assert.equal(
    first.r.isError,
    true,
    `round ${round}: ${"AB"[first.i]} was answered while ${winner} held the pane: ${
      textOf(first.r)
    }`,
  );
  assert.match(textOf(first.r), named(winner), `round ${round}: ${textOf(first.r)}`);
  await waitFor(async () => (await begun(t, paneId)) > before, `round ${round}: ${winner} began`);
  await t.tmux("send-keys", "-t", paneId, "-l", `ok${round}`);
  await t.tmux("send-keys", "-t", paneId, "Enter");
  const won = (await calls[1 - first.i]).r;
  assert.notEqual(won.isError, true, textOf(won));
  const run = won.structuredContent as Run;
  assert.deepEqual(
    [run.exitStatus, run.output],
    [0, `ok${round}\n${winner}${round} got [ok${round}]`],
    `round ${round}: ${JSON.stringify(run)}`,
  );
}

Deno.test("run_command: two calls into one pane at once from one server: one runs, one is refused", async () => {
  await withServer(async (t, c) => {
    for (let round = 0; round < 8; round++) {
      await runTogether(
        t,
        t.ids.paneId,
        c,
        c,
        round,
        (winner) => new RegExp(`still running an earlier run_command .*${winner}${round} got`),
      );
    }
  });
});

Deno.test("run_command: two servers into one pane at once: one runs, one is refused", async () => {
  await withServer(async (t, c) => {
    const other = await connect({ socketName: t.socket });
    try {
      for (let round = 0; round < 8; round++) {
        await runTogether(
          t,
          t.ids.paneId,
          c,
          other,
          round,
          () => /another run_command|earlier run_command/,
        );
      }
      assert.equal(await runMark(t, t.ids.paneId), "", "no mark left once the commands ended");
    } finally {
      await other.close();
    }
  });
});

Deno.test("run_command: another server waits in read in the pane: refused, nothing typed into the read", async () => {
  await withServer(async (t, c) => {
    const other = await connect({ socketName: t.socket });
    try {
      const p = t.ids.paneId;
      const before = await begun(t, p);
      const waiting = other.ok<Run>("run_command", {
        paneId: p,
        command: 'read -r l; echo "got [$l]"',
        timeoutMs: 60_000,
      });
      await waitFor(async () => (await begun(t, p)) > before, "the read to begin");
      const refused = await c.fail("run_command", { paneId: p, command: "echo B-ran" });
      assert.match(refused, /another run_command/);
      assert.match(refused, /job \d+-[0-9a-f]{20}-/);
      assert.match(refused, /get_command_result/);
      await t.tmux("send-keys", "-t", p, "-l", "answer");
      await t.tmux("send-keys", "-t", p, "Enter");
      const done = await waiting;
      assert.deepEqual([done.exitStatus, done.output], [0, "answer\ngot [answer]"]);
      const next = await c.ok<Run>("run_command", { paneId: p, command: "echo B-ran" });
      assert.equal(next.output, "B-ran");
    } finally {
      await other.close();
    }
  });
});

Deno.test("run_command: a server killed while its command ran leaves the pane free once it is over", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    const { cmd, args } = startCommand();
    for (const ending of ["answered", "abandoned"]) {
      const a = new StdioServer(cmd, [...args, "--socket", t.socket], cleanEnv());
      try {
        await a.initialize();
        const before = await begun(t, p);
        // It would wait 8 s on the command: its mark says so.
        a.callTool("run_command", {
          paneId: p,
          command: 'read -r l; echo "got [$l]"',
          timeoutMs: 8_000,
        }).catch(() => {});
        await waitFor(async () => (await begun(t, p)) > before, "the read to begin");
        assert.match(await runMark(t, p), /^\d+-[0-9a-f]{20}-/);
      } finally {
        await a.kill();
      }
      if (ending === "answered") {
        // Its end marker is on screen: the mark of a server that is gone is stale at once.
        await t.tmux("send-keys", "-t", p, "-l", "yes");
        await t.tmux("send-keys", "-t", p, "Enter");
        await waitFor(
          async () => /^got \[yes\]$/m.test(await t.tmux("capture-pane", "-p", "-t", p)),
          "the command to end",
        );
        const next = await c.ok<Run>("run_command", { paneId: p, command: "echo after-end" });
        assert.equal(next.output, "after-end");
      } else {
        // Nobody will answer, and once the 8 s are over nobody waits on it: free then.
        const next = await waitFor(
          async () => {
            const r = await c.call("run_command", { paneId: p, command: "echo after-lease" });
            if (r.isError) assert.match(textOf(r), /another run_command/);
            return r.isError ? null : r.structuredContent as Run;
          },
          "the pane to be free",
          60_000,
        );
        assert.equal(next.output, "after-lease");
      }
      assert.equal(await runMark(t, p), "");
    }
  });
});

Deno.test("run_command: a mark that is not a job of this pane does not keep it busy", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    for (const mark of ["hello #{pane_id} , }", "12-nothing", `0-${"a".repeat(20)}-1-1-1-1`]) {
      await t.tmux("set-option", "-p", "-t", p, "@tmux-mcp-run", mark);
      const r = await c.ok<Run>("run_command", { paneId: p, command: "echo free" });
      assert.equal(r.output, "free", mark);
      assert.equal(await runMark(t, p), "", mark);
    }
  });
});

Deno.test("run_command in the background keeps the pane marked while it runs, for every server", async () => {
  await withServer(async (t, c) => {
    const other = await connect({ socketName: t.socket });
    try {
      const p = t.ids.paneId;
      const bg = await c.ok<Run & { jobId: string }>("run_command", {
        paneId: p,
        command: "sleep 30",
        background: true,
      });
      assert.equal(await runMark(t, p), bg.jobId);
      const refused = await other.fail("run_command", { paneId: p, command: "echo no" });
      assert.match(refused, new RegExp(`another run_command .*job ${bg.jobId}`));
      // No tool clears or forges the mark, at the pane or at a scope that shows through it.
      for (
        const [scope, where] of [
          ["pane", { target: p }],
          ["server", {}],
          ["session", { global: true }],
        ] as const
      ) {
        for (const change of [{ unset: true }, { value: "" }, { value: "0-x" }]) {
          assert.match(
            await other.fail("set_option", { name: "@tmux-mcp-run", scope, ...where, ...change }),
            /marks a pane busy with a run_command's command/,
          );
        }
      }
      assert.equal(await runMark(t, p), bg.jobId);
      await t.foreground(p, "sleep");
      await t.tmux("send-keys", "-t", p, "C-c");
      const lost = await other.ok<{ state: string }>("get_command_result", {
        jobId: bg.jobId,
        waitMs: 20_000,
      });
      assert.equal(lost.state, "lost");
      assert.equal(await runMark(t, p), "", "the reader of a job that is over clears its mark");
      const next = await other.ok<Run>("run_command", { paneId: p, command: "echo yes" });
      assert.equal(next.output, "yes");
    } finally {
      await other.close();
    }
  });
});

Deno.test("run_command: a reply without an end stops where another run_command's line began", async () => {
  await withServer(async (t, c) => {
    const p = t.ids.paneId;
    // The pane's rows stay once its shell exits.
    await t.tmux("set-option", "-p", "-t", p, "remain-on-exit", "on");
    const before = await begun(t, p);
    const waiting = c.ok<Run>("run_command", {
      paneId: p,
      command: "echo mi''ne; read -r x",
      timeoutMs: 60_000,
    });
    await waitFor(
      async () => /^mine$/m.test(await t.tmux("capture-pane", "-p", "-t", p)),
      "the command to wait in read",
    );
    assert.equal(await begun(t, p), before + 1);
    // Its line interrupted, and another run_command's line typed by hand (a run_command never
    // types into a pane whose command a call waits on): that command ends the shell. Typed at
    // the prompt the C-c brings, or its echo would come before the prompt and its output after.
    await t.tmux("send-keys", "-t", p, "C-c");
    await t.atPrompt(p);
    const line = typedCommand("echo the''irs; exit", "0123456789abcdef0123", "sh");
    await t.tmux("send-keys", "-t", p, "-l", line);
    await t.tmux("send-keys", "-t", p, "Enter");
    const r = await waiting;
    assert.equal(r.paneDied, true, JSON.stringify(r));
    assert.equal(r.outputComplete, false, JSON.stringify(r));
    assert.match(r.output, /^mine\b/);
    assert.doesNotMatch(r.output, /theirs|__tmcp/, r.output);
  });
});
