/**
 * The line run_command types, run by real shells (without a terminal: what the shell does with
 * the line once read). The terminal side (line editors, history, pastes) is tested through
 * tmux in tests/input_test.ts.
 */
import assert from "node:assert/strict";
import { typedCommand } from "./typed.ts";
import { endCheck, findMarkers, markerWords } from "./job_markers.ts";
import { withoutDeadLine } from "./job_state.ts";

const SHELLS = ["/bin/sh", "/bin/dash", "/bin/bash", "/usr/bin/zsh", "/bin/zsh"].filter((path) => {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
});

const NONCE = "0123456789abcdef0123";

/** Runs `line` (then `after`) in `shell`; returns what it printed, as rows. */
async function runLine(
  shell: string,
  line: string,
  options: { env?: Record<string, string>; after?: string } = {},
): Promise<string[]> {
  const out = await new Deno.Command(shell, {
    args: ["-c", `${line}\n${options.after ?? ""}`],
    env: { LC_ALL: "C.UTF-8", PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...options.env },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return shown(new TextDecoder().decode(out.stdout)).split("\n");
}

/** What a terminal shows of `text`: the escape sequences the markers start with are its own. */
function shown(text: string): string {
  // The end marker's resets (string end, scroll region kept by the cursor, autowrap, the
  // attributes and character set) print nothing, and its row starts at column 0 (`\r\n`).
  return text.replaceAll("\x1b\\", "").replaceAll("\x1b[2L", "").replaceAll("\x1b7", "")
    .replaceAll("\x1b[r", "").replaceAll("\x1b8", "").replaceAll("\x1b[?7h", "")
    .replaceAll("\x1b[m\x0f\x1b(B", "").replaceAll("\r\n", "\n");
}

function nameOf(shell: string): string {
  const name = shell.split("/").pop()!;
  return name === "dash" ? "sh" : name;
}

const COMMANDS: readonly { command: string; output: string; status: number }[] = [
  { command: "true", output: "", status: 0 },
  { command: "echo plain-words 1,2 a=b x@y 50%", output: "plain-words 1,2 a=b x@y 50%", status: 0 },
  {
    command:
      `printf '%s\\n' "it's" '$HOME' '\`bt\`' 'a;' '!!' '#x' '日本🙂' 'back\\slash'; (exit 5)`,
    output: "it's\n$HOME\n`bt`\na;\n!!\n#x\n日本🙂\nback\\slash",
    status: 5,
  },
  { command: "for i in 1 2\ndo echo n$i\ndone\nfalse", output: "n1\nn2", status: 1 },
  { command: "printf 'tab\\there'\n", output: "tab\there", status: 0 },
  {
    command: `v='${"x".repeat(2_000)}${"'\\''\"$;".repeat(300)}'; echo "\${#v}"`,
    output: String(2_000 + 4 * 300),
    status: 0,
  },
  { command: "x".repeat(3_500).replace(/^/, "echo "), output: "x".repeat(3_500), status: 0 },
  // Long, and its pieces cut inside characters of several bytes.
  { command: `echo ${"é日".repeat(300)}`, output: "é日".repeat(300), status: 0 },
];

for (const shell of SHELLS) {
  Deno.test(`typedCommand in ${shell}: output, status and end time come back exactly`, async () => {
    for (const { command, output, status } of COMMANDS) {
      const line = typedCommand(command, NONCE, nameOf(shell));
      const started = Date.now();
      // Whole seconds (`date +%s`) count from the second it started in, and time(), behind
      // bash's EPOCHSECONDS, moves on at the kernel's tick: just after a second turns it may
      // still say the last one (it did, 5 ms after, in one CI run). job_state.ts allows a
      // second for it. bash's EPOCHREALTIME reads the same clock as Date.now(), to the µs.
      const before = nameOf(shell) === "bash" ? started : (Math.floor(started / 1000) - 1) * 1000;
      const rows = await runLine(shell, line, { after: 'echo "left:${__tmux_mcp_cmd-none}"' });
      const marked = findMarkers(rows, NONCE);
      const label = `${shell}: ${JSON.stringify(command.slice(0, 60))}`;
      assert.equal(marked.begun, true, label);
      assert.equal(marked.status, status, label);
      assert.equal(marked.output, output, label);
      assert.ok(
        marked.endedMs !== null && marked.endedMs >= before && marked.endedMs <= Date.now(),
        `${label}: ended ${marked.endedMs}`,
      );
      // Nothing of ours stays in the person's shell.
      assert.ok(rows.includes("left:none"), `${label}: ${rows.at(-2)}`);
    }
  });

  if (nameOf(shell) === "zsh") {
    Deno.test(`typedCommand in ${shell} with zsh/datetime: the end time to the ms`, async () => {
      // zsh writes EPOCHREALTIME with ten digits after the point.
      const started = Date.now();
      const line = `zmodload zsh/datetime\n${typedCommand("(exit 3)", NONCE, "zsh")}`;
      const marked = findMarkers(await runLine(shell, line), NONCE);
      assert.equal(marked.status, 3);
      assert.ok(
        marked.endedMs !== null && marked.endedMs >= started && marked.endedMs <= Date.now(),
        `ended ${marked.endedMs}, started ${started}`,
      );
    });
  }

  Deno.test(`typedCommand in ${shell}: a variable EPOCHSECONDS or EPOCHREALTIME that is no time loses only the end time`, async () => {
    const values = ["a:b", "", "12x", "9".repeat(30), "12.", "1.5.6", ".5", "1,2,3", "1 2"];
    for (
      const [name, value] of values.flatMap((v) => [["EPOCHSECONDS", v], ["EPOCHREALTIME", v]])
    ) {
      const rows = await runLine(shell, typedCommand("(exit 7)", NONCE, nameOf(shell)), {
        env: { [name]: value },
      });
      const marked = findMarkers(rows, NONCE);
      assert.equal(marked.status, 7, `${shell} ${name}=${value}`);
      // bash 5 keeps its own clock in it whatever the environment says.
      const own = nameOf(shell) === "bash" && marked.endedMs !== null &&
        Math.abs(marked.endedMs - Date.now()) < 5_000;
      if (value !== "" && !own) {
        assert.equal(marked.endedMs, null, `${shell} ${name}=${value}`);
      }
    }
  });
}

for (const shell of SHELLS) {
  Deno.test(`typedCommand in ${shell}: with xtrace on, only the command is traced`, async () => {
    for (const command of ["echo plain", "echo 'q'; (exit 4)", `echo '${"x".repeat(2_000)}'`]) {
      const out = await new Deno.Command(shell, {
        args: ["-c", `set -x\n${typedCommand(command, NONCE, nameOf(shell))}`],
        env: { LC_ALL: "C.UTF-8", PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      const trace = new TextDecoder().decode(out.stderr);
      const label = `${shell}, ${command.slice(0, 20)}: ${trace.slice(0, 300)}`;
      assert.match(trace, /eval/, label);
      assert.doesNotMatch(trace, /__tmcp|%b|date|EPOCH|unset|__tmux_mcp_cmd/, label);
      const rows = shown(new TextDecoder().decode(out.stdout)).split("\n");
      assert.equal(findMarkers(rows, NONCE).status, command.includes("exit 4") ? 4 : 0, label);
    }
  });
}

for (const shell of SHELLS.filter((path) => nameOf(path) !== "sh")) {
  Deno.test(`typedCommand in ${shell}: functions named like its words are not run`, async () => {
    const functions = "command() { echo wrapped; }; printf() { :; }; eval() { :; }";
    for (
      const [command, output, status] of [
        ["echo plain", "plain", 0],
        ["echo 'q'; (exit 4)", "q", 4],
        [`echo '${"x".repeat(2_000)}'`, "x".repeat(2_000), 0],
      ] as const
    ) {
      const line = typedCommand(command, NONCE, nameOf(shell));
      const marked = findMarkers(await runLine(shell, `${functions}\n${line}`), NONCE);
      const label = `${shell}: ${command.slice(0, 20)}`;
      assert.equal(marked.begun, true, label);
      assert.equal(marked.status, status, label);
      assert.equal(marked.output, output, label);
    }
  });
}

Deno.test("typedCommand starts no process of its own where the shell needs none", () => {
  // A command of plain bytes is typed as itself, in every shell.
  for (const shell of ["sh", "bash", "zsh"]) {
    assert.doesNotMatch(typedCommand("make test", NONCE, shell), /printf %b|printf -v/);
  }
  // Anything else: bash decodes into a variable, others in a command substitution.
  assert.match(typedCommand("ls | wc -l", NONCE, "bash"), /printf -v __tmux_mcp_cmd %b '/);
  assert.doesNotMatch(typedCommand("ls | wc -l", NONCE, "bash"), /\$\(printf/);
  assert.match(typedCommand("ls | wc -l", NONCE, "sh"), /"\$\(\{ \\printf %b '/);
  // zsh reads it as a word it decodes itself: a TRAPDEBUG that prints never runs inside a
  // subshell whose output is the command.
  assert.match(typedCommand("ls | wc -l", NONCE, "zsh"), /eval \$'ls \\174 wc -l'; /);
  assert.doesNotMatch(typedCommand("ls | wc -l", NONCE, "zsh"), /printf %b|printf -v/);
  // The end time: the shell's own clock first (to the µs, else in seconds), `date` only where
  // there is none.
  assert.match(
    typedCommand("true", NONCE, "sh"),
    /"\$\{EPOCHREALTIME:-\$\{EPOCHSECONDS:-\$\(date \+%s\)\}\}"/,
  );
});

Deno.test("typedCommand types no line a line editor would cut (busybox keeps about 1 023 bytes)", () => {
  for (const shell of ["sh", "bash", "zsh"]) {
    for (const size of [100, 900, 958, 1_500, 3_000, 20_000]) {
      for (
        const command of ["x".repeat(size), "é".repeat(size / 2), `echo '${"a".repeat(size)}'`]
      ) {
        for (const line of typedCommand(command, NONCE, shell).split("\n")) {
          const bytes = new TextEncoder().encode(line).length;
          assert.ok(bytes <= 960, `${shell}, ${size}: a line of ${bytes} bytes`);
        }
      }
    }
  }
});

/** The end marker row the shell prints for `nonce` with `status`, then `tail`. */
function endRow(nonce: string, status: number, tail: string): string {
  return `__tmcp_${nonce}_E:${status}:${endCheck(nonce, status)}${tail}`;
}

Deno.test("findMarkers reads the end time only when it is one", () => {
  const begin = `__tmcp_${NONCE}_B`;
  const end = (tail: string) => findMarkers([begin, "out", endRow(NONCE, 3, tail)], NONCE);
  assert.deepEqual(end(":1700000000"), {
    begun: true,
    status: 3,
    endedMs: 1_700_000_000_000,
    output: "out",
  });
  assert.equal(end("").endedMs, null);
  assert.equal(end(":").endedMs, null);
  assert.equal(end(":a:b").status, 3);
  assert.equal(end(":a:b").endedMs, null);
  assert.equal(end(":" + "9".repeat(30)).endedMs, null);
  assert.equal(findMarkers([begin, `__tmcp_${NONCE}_E:x:1`], NONCE).status, null);
  // EPOCHREALTIME: bash's µs after the locale's point (a comma in de_DE), zsh's ns; the ms of it.
  assert.equal(end(":1700000000.004897").endedMs, 1_700_000_000_004);
  assert.equal(end(":1700000000,999999").endedMs, 1_700_000_000_999);
  assert.equal(end(":1700000000.5").endedMs, 1_700_000_000_500);
  assert.equal(end(":1700000000.123456789").endedMs, 1_700_000_000_123);
  assert.equal(end(":1796439004.8375635147").endedMs, 1_796_439_004_837);
  const long = "1." + "1".repeat(21);
  for (const bad of ["1700000000.", ".5", "1.2.3", "1,2,3", "1 2", long, "1e9", "-1", "1.5e3"]) {
    assert.equal(end(":" + bad).endedMs, null, bad);
    assert.equal(end(":" + bad).status, 3, bad);
  }
});

Deno.test("findMarkers: an end marker without its check is no end, whatever else it holds", () => {
  const begin = `__tmcp_${NONCE}_B`;
  const real = endRow(NONCE, 1, ":1700000000");
  const check = endCheck(NONCE, 1);
  for (
    const row of [
      // The begin marker's `_B` overwritten: the nonce without knowing it.
      `__tmcp_${NONCE}_E:0`,
      `__tmcp_${NONCE}_E:0::`,
      `__tmcp_${NONCE}_E:0:0:1700000000`,
      // The real end with a digit of its status changed afterwards.
      real.replace("_E:1:", "_E:0:"),
      real.replace("_E:1:", "_E:11:"),
      // Its check moved to another status, or changed.
      `__tmcp_${NONCE}_E:0:${check}:1700000000`,
      real.replace(`:${check}:`, `:${check}1:`),
      // Another job's check.
      endRow("a1b2c3d4e5f60718293a", 0, ":1").replace("a1b2c3d4e5f60718293a", NONCE),
    ]
  ) {
    const marked = findMarkers([begin, "out", row], NONCE);
    assert.equal(marked.status, null, row);
    assert.equal(marked.falseEnd, true, row);
    assert.equal(marked.output, `out\n${row}`, row);
  }
  // A false end below the real one changes nothing.
  const both = findMarkers([begin, "out", real, `__tmcp_${NONCE}_E:0`], NONCE);
  assert.equal(both.status, 1);
  assert.equal(both.falseEnd, undefined);
  // Every status a shell reports has its own check.
  const checks = new Set(Array.from({ length: 400 }, (_, s) => endCheck(NONCE, s)));
  assert.equal(checks.size, 400);
});

Deno.test("findMarkers: a start that left the pane takes the rows above the end, and says so", () => {
  const typedRow = `$ ${typedCommand("clear; echo after", NONCE)}`;
  const end = endRow(NONCE, 0, ":1700000000");
  // `clear`: the screen and the history went, the rows moved up above where the job started.
  const cleared = findMarkers(["PASSED: 12", "FAILED: 3", end, "$"], NONCE, 5);
  assert.equal(cleared.status, 0);
  assert.equal(cleared.begun, false);
  assert.equal(cleared.startGone, true);
  assert.equal(cleared.output, "PASSED: 12\nFAILED: 3");
  // xtrace on: the trace of the words that print the end marker holds its words too.
  const traced = `+ printf '\\033\\\\%s_%s_E:%s\\n' __tmcp ${NONCE} 0 ${endCheck(NONCE, 0)} 1`;
  const afterClear = findMarkers(["after", traced, end, "$"], NONCE, 5);
  assert.equal(afterClear.output, `after\n${traced}`);
  // The start pushed out of the history: the rows from where the job started.
  const pushed = findMarkers(["earlier", "x1", "x2", "x3", end], NONCE, 2);
  assert.equal(pushed.startGone, true);
  assert.equal(pushed.output, "x2\nx3");
  // The cursor went up over its start: what is above the end is earlier output.
  const over = findMarkers(["earlier", end, typedRow, "one"], NONCE, 2);
  assert.equal(over.output, "");
  assert.equal(over.status, 0);
  // Its line still there: the output starts below it.
  const echoed = findMarkers(["earlier", typedRow, "one", end], NONCE, 9);
  assert.equal(echoed.startGone, undefined);
  assert.equal(echoed.output, "one");
});

Deno.test("findMarkers: a job without its end ends before another run_command's typed line", () => {
  const other = "fedcba9876543210fedc";
  const before = [
    "$ printf ... __tmcp " + NONCE + "; command eval 'sleep 9'",
    `__tmcp_${NONCE}_B`,
    "one",
    "^C",
  ];
  /**
   * The rows of another run_command: its typed lines (with what a shell may show beside each,
   * as zsh's right prompt), what the shell prints before running it (PS0, preexec), its run.
   */
  const ran = (typed: string, beside = "", between: readonly string[] = []) => [
    ...typed.split("\n").map((line) => `$ ${line}${beside}`),
    ...between,
    `__tmcp_${other}_B`,
    "next",
    endRow(other, 0, ":1700000000"),
    "$",
  ];
  // Every shape typedCommand types: plain, decoded (bash, other shells), long (several lines).
  for (
    const [command, shell] of [
      ["echo next", "sh"],
      ["echo next", "zsh"],
      ["echo 'next'", "bash"],
      ["echo 'next'", "sh"],
      ["echo 'next'", "zsh"],
      ["echo " + "x".repeat(3_500), "bash"],
      ["echo " + "x".repeat(3_500), "sh"],
      ["echo '" + "x".repeat(3_500) + "'", "zsh"],
    ]
  ) {
    const typed = typedCommand(command, other, shell);
    // And as lines were typed before the markers started with escape sequences.
    const older = typed.replaceAll(String.raw`\033\\\n\033[2L`, "").replaceAll(
      String.raw`\033\\`,
      "",
    );
    assert.notEqual(older, typed);
    for (const line of [typed, older]) {
      const marked = findMarkers([...before, ...ran(line)], NONCE);
      assert.equal(marked.beforeNext, "one\n^C", `${shell}: ${line.slice(0, 60)}`);
      assert.match(marked.output, /next/, "the whole output stays for a job that runs");
      // zsh's right prompt beside each typed line; rows printed before the command runs.
      for (
        const [beside, between] of [
          ["      [12:00:00]", []],
          [" %", []],
          ["", ["started 12:00:00"]],
          ["", ["", "started", "", ""]],
          [" [12:00:00]", Array.from({ length: 8 }, (_, i) => `preexec ${i}`)],
        ] as const
      ) {
        const rows = [...before, ...ran(line, beside, between)];
        assert.equal(
          findMarkers(rows, NONCE).beforeNext,
          "one\n^C",
          `${shell}: ${JSON.stringify([beside, between])} ${line.slice(0, 60)}`,
        );
      }
    }
  }
  // Lines as the versions before typed them: a pane may still show one after an upgrade.
  const begin = String.raw`\printf '\033\\%s_%s_B\n' __tmcp ${other}`;
  const end = String.raw`\printf '\033\\\n\033[2L%s_%s_E:%s:%s:%s\n' __tmcp ${other} "$?" ` +
    '"$(( (4175662 ^ 2497941) * ($? + 1) ))" "${EPOCHSECONDS:-$(date +%s 2>/dev/null)}"';
  for (
    const line of [
      String.raw` ${begin}; \command eval 'make test'; ${end}`,
      String.raw` ${begin}; \printf -v __tmux_mcp_cmd %b 'ls \0174 wc'; \command eval ` +
      String.raw`"$__tmux_mcp_cmd"; ${end}; unset __tmux_mcp_cmd`,
      String.raw` ${begin}; \eval "$(\printf %b 'ls \0174 wc')"; ${end}`,
      String.raw` ${begin}; \command eval "$(\printf %b 'ls \0174 wc')"; ${end}`,
      // A long command, built up a line at a time.
      [
        " __tmux_mcp_cmd=''",
        String.raw` __tmux_mcp_cmd="$__tmux_mcp_cmd"'ls \0174 wc'`,
        String.raw` ${begin}; \command eval "$(\printf %b "$__tmux_mcp_cmd")"; ${end}; ` +
        "unset __tmux_mcp_cmd",
      ].join("\n"),
    ]
  ) {
    const marked = findMarkers([...before, ...ran(line, " [12:00]", ["started"])], NONCE);
    assert.equal(marked.beforeNext, "one\n^C", line);
  }
  // A shell without line editing: its prompts on the begin marker's row.
  const dash = [...before, ` ${typedCommand("echo next", other)}`, `$ $ __tmcp_${other}_B`, "next"];
  assert.equal(findMarkers(dash, NONCE).beforeNext, "one\n^C");
  // What merely holds the marker words is the job's own output: `history`, a history file, a
  // typed line without its begin marker in the rows below it (these are too far), a begin
  // marker without its line.
  const typed = typedCommand("echo first", other, "bash");
  const own = [
    "START",
    `    2  ${typed}`,
    `    3  ${typed}`,
    "    4  history",
    typed,
    ...Array.from({ length: 9 }, (_, i) => `ls ${i}`),
    `__tmcp_${other}_B`,
    `echo __tmcp ${other} is a word`,
    `$ printf '%s_%s_B\\n' __tmcp ${other}; command eval 'echo next'; printf ...`,
    `__tmcp_${other}_B`,
    "END",
  ];
  const kept = findMarkers([`__tmcp_${NONCE}_B`, ...own], NONCE);
  assert.equal(kept.output, own.join("\n"));
  assert.equal(kept.beforeNext, undefined);
  // The job's own end marker: nothing is cut.
  const ended = [...before, ...ran(typedCommand("echo next", other)), endRow(NONCE, 0, ":1")];
  assert.equal(findMarkers(ended, NONCE).beforeNext, undefined);
  // Output made to look like another run_command's line and begin marker (a job can read its
  // screen) only ever cuts a job's output short, and only one without its end.
  const forged = [
    `__tmcp_${NONCE}_B`,
    "one",
    `${typed}   [12:00]`,
    "x",
    `__tmcp_${other}_B`,
    "two",
  ];
  const cut = findMarkers(forged, NONCE);
  assert.equal(cut.output, forged.slice(1).join("\n"));
  assert.equal(cut.beforeNext, "one");
  assert.equal(findMarkers([...forged, endRow(NONCE, 0, ":1")], NONCE).beforeNext, undefined);
});

Deno.test("withoutDeadLine drops tmux's dead-pane line (the last row that is not blank) only", () => {
  const dead = "Pane is dead (status 5, Wed Dec  2 12:16:08 2026)";
  assert.deepEqual(withoutDeadLine(["bye", "", "", dead, ""]), ["bye", "", ""]);
  assert.deepEqual(
    withoutDeadLine(["x", "Pane is dead (signal 9, Wed Dec  2 12:16:08 2026)"]),
    ["x"],
  );
  assert.deepEqual(withoutDeadLine(["bye", dead, "after"]), ["bye", dead, "after"]);
  assert.deepEqual(withoutDeadLine(["Pane is dead"]), ["Pane is dead"]);
});

Deno.test("findMarkers: a check a shell printed as a float (zsh's force_float) is the check", () => {
  const check = endCheck(NONCE, 3);
  for (const printed of [`${check}.`, `${check}.0`]) {
    const marked = findMarkers(
      [`__tmcp_${NONCE}_B`, "hello", `__tmcp_${NONCE}_E:3:${printed}:1700000000`],
      NONCE,
    );
    assert.equal(marked.status, 3, printed);
    assert.equal(marked.output, "hello");
  }
  // A fraction is no way around the check: its integer part must still be it.
  const wrong = findMarkers(
    [`__tmcp_${NONCE}_B`, "x", `__tmcp_${NONCE}_E:0:${check}.:1700000000`],
    NONCE,
  );
  assert.equal(wrong.status, null);
  assert.equal(
    findMarkers([`__tmcp_${NONCE}_E:3:${check}.5:1`], NONCE).status,
    null,
    "not an integer: no shell printed it",
  );
});

Deno.test("endCheck: a nonce whose two terms would be equal still checks the status", () => {
  const nonce = "000003000002ddeeff00"; // both terms 0 before they are made to differ
  const checks = new Set(Array.from({ length: 256 }, (_, status) => endCheck(nonce, status)));
  assert.equal(checks.size, 256, "a check of its own for every status");
  assert.match(
    markerWords(nonce).end,
    /\(0 \^ 1\) \* \(\$\? \+ 1\)/,
    "the shell computes the same",
  );
});
