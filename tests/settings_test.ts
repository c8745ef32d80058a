/**
 * Options, hooks, environments and pipe_pane on private tmux servers. Values are read back
 * both through the tools and through tmux directly, byte for byte; show_hook keeps the seed
 * contract (000) to the letter.
 */

import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import assert from "node:assert/strict";
import { withTmux } from "./helpers/mcp.ts";
import { sh, waitFor } from "./helpers/tmux.ts";
import { parseOptionLines, unquoteOptionValue } from "../src/tools/option_lines.ts";
import { parseShellEnvironment } from "../src/tools/environment_read.ts";
import { shellQuote } from "../src/tools/pipe_checks.ts";

/** Values that have broken option and environment round trips somewhere. */
const TRICKY = [
  "plain",
  "sp ace",
  'dq"x',
  "sq'x",
  "has $dollar #hash ;semi {b} %p",
  "nl\nx\ttab\\back",
  "~tilde",
  "#",
  '"',
  "🙂 ü 日本",
  "both ' and \" and $ x",
  "ends with;",
  "-starts with a dash",
  "#(touch /nonexistent/never) #{pid}",
  "x`y",
  "ctl\u0001\u007f",
  "\\",
  "  ",
];

/**
 * The tricky values set_option takes: an option's value may hold no control character but tab
 * and newline (tmux writes it raw into a person's terminal title wherever one shows it).
 */
// deno-lint-ignore no-control-regex
const SETTABLE = TRICKY.filter((value) => !/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(value));

// ---------------------------------------------------------------------------------------------
// Parsers (pure)

Deno.test("unquoteOptionValue undoes tmux's quoting forms", () => {
  assert.equal(unquoteOptionValue("''"), "");
  assert.equal(unquoteOptionValue("plain"), "plain");
  assert.equal(unquoteOptionValue('"sp ace"'), "sp ace");
  assert.equal(unquoteOptionValue(`'dq"x'`), 'dq"x');
  assert.equal(unquoteOptionValue('"has \\$d #h"'), "has $d #h");
  assert.equal(unquoteOptionValue("nl\\nx\\ttab\\\\back"), "nl\nx\ttab\\back");
  assert.equal(unquoteOptionValue("\\~tilde"), "~tilde");
  assert.equal(unquoteOptionValue("\\#"), "#");
  assert.equal(unquoteOptionValue("ctl\\001\\177"), "ctl\u0001\u007f");
  // Octal escapes are bytes: a split UTF-8 character comes back whole, a bad byte as U+FFFD.
  assert.equal(unquoteOptionValue("\\303\\274"), "ü");
  assert.equal(unquoteOptionValue("\\377"), "\uFFFD");
});

Deno.test("parseOptionLines splits names, indexes, inheritance marks and values", () => {
  assert.deepEqual(parseOptionLines('status-format[1] "a b"\n@x* v\npane-exited\n'), [
    { name: "status-format", index: 1, inherited: false, raw: '"a b"' },
    { name: "@x", index: null, inherited: true, raw: "v" },
    { name: "pane-exited", index: null, inherited: false, raw: null },
  ]);
});

Deno.test("parseShellEnvironment reads show-environment -s exactly and refuses anything else", () => {
  const enc = (s: string) => new TextEncoder().encode(s);
  assert.deepEqual(
    parseShellEnvironment(
      enc('A="1;"; export A;\nD="l1\nl2"; export D;\nunset X;\nE="q\\"\\$\\`\\\\"; export E;\n'),
    ),
    [
      { name: "A", value: "1;" },
      { name: "D", value: "l1\nl2" },
      { name: "X", value: null },
      { name: "E", value: 'q"$`\\' },
    ],
  );
  assert.deepEqual(
    parseShellEnvironment(new Uint8Array([0x42, 0x3d, 0x22, 0xff, 0x22, ...enc("; export B;\n")])),
    [
      { name: "B", value: "\uFFFD" },
    ],
  );
  assert.throws(() => parseShellEnvironment(enc("A=1\n")), /expected/);
});

Deno.test("shellQuote makes one shell word of anything", async () => {
  for (const text of TRICKY) {
    const out = await new Deno.Command("sh", {
      args: ["-c", `printf %s ${shellQuote(text)}`],
      stdout: "piped",
    }).output();
    assert.equal(new TextDecoder().decode(out.stdout), text);
  }
});

// ---------------------------------------------------------------------------------------------
// Options

Deno.test("show_option and show_options read tricky values back exactly", async () => {
  await withTmux(async (t, c) => {
    for (const [i, value] of TRICKY.entries()) {
      await t.tmux(
        "set-option",
        "-g",
        "--",
        `@v${i}`,
        value.endsWith(";") ? `${value.slice(0, -1)}\\;` : value,
      );
      const raw = await t.tmux("show-options", "-gv", "--", `@v${i}`);
      assert.equal(raw, `${value}\n`, "tmux itself stored it exactly");
      const one = await c.ok<{ value: string; set: boolean }>("show_option", {
        name: `@v${i}`,
        scope: "session",
        global: true,
      });
      assert.equal(one.value, value);
      assert.equal(one.set, true);
    }
    const all = await c.ok<{ options: { name: string; value: string }[] }>("show_options", {
      scope: "session",
      global: true,
    });
    for (const [i, value] of TRICKY.entries()) {
      assert.equal(all.options.find((o) => o.name === `@v${i}`)?.value, value);
    }
    // An array option gives one entry per index.
    const arr = await c.ok<{ entries: { index: number }[]; value: null }>("show_option", {
      name: "status-format",
      scope: "session",
      global: true,
    });
    assert.deepEqual(arr.entries.map((e) => e.index), [0, 1]);
    assert.equal(arr.value, null);
  });
});

Deno.test("show_option scopes: server, session, window, pane, inheritance and refusals", async () => {
  await withTmux(async (t, c) => {
    const server = await c.ok<{ value: string }>("show_option", {
      name: "escape-time",
      scope: "server",
    });
    assert.equal(server.value, "500");
    await t.tmux("set-option", "-t", "main", "@s", "sess");
    await t.tmux("set-option", "-w", "-t", t.ids.windowId, "@w", "win");
    await t.tmux("set-option", "-p", "-t", t.ids.paneId, "@p", "pane");
    assert.equal(
      (await c.ok<{ value: string }>("show_option", {
        name: "@s",
        scope: "session",
        target: "main",
      })).value,
      "sess",
    );
    assert.equal(
      (await c.ok<{ value: string }>("show_option", {
        name: "@w",
        scope: "window",
        target: t.ids.windowId,
      })).value,
      "win",
    );
    assert.equal(
      (await c.ok<{ value: string }>("show_option", {
        name: "@p",
        scope: "pane",
        target: t.ids.paneId,
      })).value,
      "pane",
    );
    // Not set locally; inherited from the global session options with includeInherited.
    const local = await c.ok<{ set: boolean }>("show_option", {
      name: "status",
      scope: "session",
      target: t.ids.sessionId,
    });
    assert.equal(local.set, false);
    const inherited = await c.ok<
      { set: boolean; entries: { inherited: boolean; value: string }[] }
    >(
      "show_option",
      { name: "status", scope: "session", target: t.ids.sessionId, includeInherited: true },
    );
    assert.deepEqual(inherited.entries.map((e) => [e.value, e.inherited]), [["on", true]]);
    const unsetUser = await c.ok<{ set: boolean; entries: unknown[] }>("show_option", {
      name: "@never-set",
      scope: "session",
      global: true,
    });
    assert.equal(unsetUser.set, false);

    assert.match(
      await c.fail("show_option", { name: "no-such-option", scope: "session", global: true }),
      /no option "no-such-option"/,
    );
    assert.match(
      await c.fail("show_option", { name: "status", scope: "session" }),
      /need a target/,
    );
    assert.match(
      await c.fail("show_option", {
        name: "status",
        scope: "session",
        target: "main",
        global: true,
      }),
      /ignore/,
    );
    assert.match(
      await c.fail("show_option", { name: "status", scope: "server", target: "main" }),
      /no target/,
    );
    assert.match(
      await c.fail("show_option", { name: "status", scope: "window", target: "@77" }),
      /No window @77/,
    );
    assert.match(
      await c.fail("show_options", { scope: "pane", target: "%77" }),
      /No pane %77/,
    );
    assert.match(
      await c.fail("show_option", { name: "#{pid}", scope: "server" }),
      /option name/,
    );
  });
});

Deno.test("set_option stores values literally (no #() runs), appends, unsets and refuses", async () => {
  await withTmux(async (t, c) => {
    const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-marker-" });
    const mark = `${dir}/ran`;
    try {
      assert.ok(SETTABLE.length < TRICKY.length);
      for (const value of TRICKY.filter((value) => !SETTABLE.includes(value))) {
        const text = await c.fail("set_option", {
          name: "@x",
          value,
          scope: "window",
          target: t.ids.windowId,
        });
        assert.match(text, /control character/, text);
      }
      for (const value of [...SETTABLE, `#(touch ${mark})`, `-#(touch ${mark});`]) {
        const r = await c.ok<{ value: string; set: boolean }>("set_option", {
          name: "@x",
          value,
          scope: "window",
          target: t.ids.windowId,
        });
        assert.equal(r.value, value);
        assert.equal(r.set, true);
        assert.equal(await t.tmux("show-options", "-wv", "-t", t.ids.windowId, "@x"), `${value}\n`);
      }
      await c.ok("set_option", { name: "@a", value: "one", scope: "session", global: true });
      const appended = await c.ok<{ value: string }>("set_option", {
        name: "@a",
        value: ";two",
        append: true,
        scope: "session",
        global: true,
      });
      assert.equal(appended.value, "one;two");
      const status = await c.ok<{ value: string }>("set_option", {
        name: "status",
        value: "off",
        scope: "session",
        target: "main",
      });
      assert.equal(status.value, "off");
      const unset = await c.ok<{ set: boolean; entries: { inherited: boolean }[] }>("set_option", {
        name: "status",
        unset: true,
        scope: "session",
        target: "main",
        includeInherited: true,
      });
      assert.equal(unset.set, false);
      assert.deepEqual(unset.entries.map((e) => e.inherited), [true]);

      assert.match(
        await c.fail("set_option", {
          name: "status",
          value: "sideways",
          scope: "session",
          global: true,
        }),
        /tmux refused/,
      );
      assert.match(
        await c.fail("set_option", { name: "no-such", value: "1", scope: "server" }),
        /no option/,
      );
      assert.match(
        await c.fail("set_option", { name: "@a", scope: "server" }),
        /Give a value, or unset/,
      );
      assert.match(
        await c.fail("set_option", { name: "@a", value: "x", unset: true, scope: "server" }),
        /unset takes no value/,
      );
      // A proof that something does not happen: a #() job runs apart from the command that
      // started it, so it is given time to show up before the marker is looked for.
      await new Promise((r) => setTimeout(r, 600));
      assert.equal(await Deno.stat(mark).then(() => true, () => false), false, "a #() job ran");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("set_option refuses a value whose format numbers tmux 3.3a would crash or freeze on", async () => {
  await withTmux(async (t, c) => {
    const pid = await t.tmux("display-message", "-p", "#{pid}");
    // A window whose program prints now and then: tmux expands its automatic-rename-format on
    // its own (no client needed) and would exit on this one.
    const windowId = (await t.tmux(
      "new-window",
      "-d",
      "-t",
      "main:",
      "-P",
      "-F",
      "#{window_id}",
      "while sleep 1; do echo tick; done",
    )).trim();
    const before = await t.tmux("show-options", "-wv", "-t", windowId, "automatic-rename-format");
    const text = await c.fail("set_option", {
      name: "automatic-rename-format",
      value: "#{p-2147483648:x}",
      scope: "window",
      target: windowId,
    });
    assert.match(text, /pad width of -2147483648/);
    assert.match(text, /tmux 3\.3a/);
    assert.match(text, /nothing was changed/i);
    assert.equal(
      await t.tmux("show-options", "-wv", "-t", windowId, "automatic-rename-format"),
      before,
    );
    // Any option may be read as a format (#{E:@x} expands a user option): all are checked.
    assert.match(
      await c.fail("set_option", {
        name: "@x",
        value: "#{e|/|f|99999:1,3}",
        scope: "server",
      }),
      /precision of 99999/,
    );
    // Appended to what is there, the value would make such a format: refused too.
    await c.ok("set_option", { name: "@half", value: "before #{p", scope: "server" });
    assert.match(
      await c.fail("set_option", {
        name: "@half",
        value: "-2147483648:x}",
        append: true,
        scope: "server",
      }),
      /pad width of -2147483648/,
    );
    assert.equal(await t.tmux("show-options", "-sv", "@half"), "before #{p\n");
    // A window this large would hold every session while tmux redraws it.
    assert.match(
      await c.fail("set_option", {
        name: "default-size",
        value: "10000x10000",
        scope: "session",
        global: true,
      }),
      /100000000 cells/,
    );
    // What people write keeps working.
    for (const value of ["#{=20:pane_title}", "#{p10:window_name}", "#{e|+:1,2}", "#{p-5:#W}"]) {
      const r = await c.ok<{ value: string }>("set_option", {
        name: "automatic-rename-format",
        value,
        scope: "window",
        target: windowId,
      });
      assert.equal(r.value, value);
    }
    // tmux's own status line, set back as it is (it trims to #{status-left-length}).
    const line = (await t.tmux("show-options", "-gv", "status-format[0]")).replace(/\n$/, "");
    assert.match(line, /#\{T;=\/#\{status-left-length\}:status-left\}/);
    await c.ok("set_option", {
      name: "status-format[0]",
      value: line,
      scope: "session",
      global: true,
    });
    const size = await c.ok<{ value: string }>("set_option", {
      name: "default-size",
      value: "200x50",
      scope: "session",
      global: true,
    });
    assert.equal(size.value, "200x50");
    assert.equal(await t.tmux("display-message", "-p", "#{pid}"), pid, "the server is the same");
  });
});

Deno.test("set_option keeps a status line that pads to the client's width (a real config)", async () => {
  await withTmux(async (t, c) => {
    // From a person's .tmux.conf: a rule across the whole status line, as wide as the client.
    const rule = "#[bg=black,fg=colour240]#{p-#{client_width}:─}";
    await c.ok("set_option", {
      name: "status-format[0]",
      value: rule,
      scope: "session",
      global: true,
    });
    assert.equal(await t.tmux("show-options", "-gv", "status-format[0]"), `${rule}\n`);
    // tmux's own sizes, signed or not, in a wrapped argument, as a precision.
    for (
      const value of [
        "#{p#{status-left-length}:session_name}",
        "#{p|+#{window_width}|:x}",
        "#{e|/|f|#{pane_height}:1,3}",
      ]
    ) {
      const r = await c.ok<{ value: string }>("set_option", { name: "@v", value, scope: "server" });
      assert.equal(r.value, value);
    }
    // tmux-sidebar's gap, as wide as the sidebar: a user option, which anyone may set to
    // -2147483648 after the check, so the refusal says what to write instead.
    await c.ok("set_option", { name: "@tmux_sidebar_width", value: "40", scope: "server" });
    const gap = "#{?#{m:*tmux-sidebar*,#{P:#{pane_title}\\|}},#{p-#{@tmux_sidebar_width}:x}┃,}";
    const before = await t.tmux("show-options", "-gv", "status-left");
    const text = await c.fail("set_option", {
      name: "status-left",
      value: gap,
      scope: "session",
      global: true,
    });
    assert.match(text, /pad width of -#\{@tmux_sidebar_width\}/);
    assert.match(
      text,
      /use a literal from -10000 to 10000 or, signed or not, one of #\{client_width\}/,
    );
    assert.equal(await t.tmux("show-options", "-gv", "status-left"), before);
    await c.ok("set_option", {
      name: "status-left",
      value: gap.replace("#{@tmux_sidebar_width}", "40"),
      scope: "session",
      global: true,
    });
    // Stored, a doubled "#" is text to one expansion only: #{E:...} in a branch of another
    // expands a user option twice (measured: "##{p5:x#}" pads then).
    assert.match(
      await c.fail("set_option", { name: "@x", value: "##{p99999:x#}", scope: "server" }),
      /pad width of 99999.*may expand a stored value more than once/,
    );
    // And asked of display_message: tmux pads to the pane's width.
    const shown = await c.ok<{ text: string }>("display_message", {
      format: "[#{p-#{pane_width}:x}]",
      target: t.ids.paneId,
    });
    assert.equal(shown.text, `[${" ".repeat(80)}]`);
  });
});

Deno.test("set_hook refuses a command whose format numbers tmux 3.3a would crash on", async () => {
  await withTmux(async (t, c) => {
    const text = await c.fail("set_hook", {
      name: "after-rename-window",
      command: "display-message '#{p-2147483648:x}'",
    });
    assert.match(text, /pad width of -2147483648/);
    // tmux prints a hook with no entries as its bare name.
    assert.equal(
      (await t.tmux("show-hooks", "-g", "after-rename-window")).trim(),
      "after-rename-window",
    );
    await c.ok("set_hook", {
      name: "after-rename-window",
      command: "set-option -g @w '#{p10:window_name}'",
    });
    await c.ok("set_hook", {
      name: "after-rename-window",
      command: "set-option -g @w '#{p-#{client_width}:─}'",
    });
    // tmux parses a hook's command line before any format is expanded: with X set to "#" in
    // its environment, "$X##{p5:x}" pads (measured). Every "#{" counts there.
    assert.match(
      await c.fail("set_hook", {
        name: "after-rename-window",
        command: 'display-message "$X##{p99999:x}"',
      }),
      /pad width of 99999.*may expand a stored value more than once/,
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Hooks

Deno.test("set_option stores a long multi-line value", async () => {
  await withTmux(async (t, c) => {
    // 1 500 lines of "abcdef": 10 500 bytes. A newline keeps it off the control connection, and
    // each check wrapped around the act quotes every newline as six bytes.
    const value = Array(1_500).fill("abcdef").join("\n");
    await c.ok("set_option", { scope: "window", target: t.ids.windowId, name: "@note", value });
    assert.equal(
      await t.tmux("show-options", "-wv", "-t", t.ids.windowId, "@note"),
      value + "\n",
    );
  });
});

Deno.test("set_option keeps tricky values exactly in options tmux keeps per session", async () => {
  await withTmux(async (t, c) => {
    // Set through the view guard's one tmux step (nobody watches): quoted once more, intact.
    for (const value of SETTABLE) {
      const r = await c.ok<{ value: string }>("set_option", {
        name: "status-left",
        value,
        scope: "session",
        target: "main",
      });
      assert.equal(r.value, value);
      assert.equal(await t.tmux("show-options", "-v", "-t", "main", "status-left"), `${value}\n`);
    }
  });
});

Deno.test("set_option refuses command-alias: an alias rewrites every client's commands", async () => {
  await withTmux(async (t, c) => {
    const before = await t.tmux("show-options", "-s", "command-alias");
    const attempts: Record<string, unknown>[] = [
      {
        name: "command-alias[90]",
        value: `send-keys=send-keys -t ${t.ids.paneId} -l X ; send-keys`,
        scope: "server",
      },
      { name: "command-alias", value: "capture-pane=kill-server", append: true, scope: "server" },
      { name: "command-alias[0]", unset: true, scope: "server" },
      { name: "command-alias", unset: true, scope: "server" },
      // At a scope tmux would not even keep it at: refused all the same.
      { name: "command-alias[91]", value: "x=kill-server", scope: "session", global: true },
    ];
    for (const args of attempts) {
      assert.match(
        await c.fail("set_option", args),
        /rewrites the tmux commands every client sends.*walk around every guard/,
        JSON.stringify(args),
      );
    }
    assert.equal(await t.tmux("show-options", "-s", "command-alias"), before);
    // Reading them stays possible.
    const read = await c.ok<{ entries: { index: number }[] }>("show_option", {
      name: "command-alias",
      scope: "server",
    });
    assert.ok(read.entries.length > 0);
  });
});

Deno.test("set_option and show_option refuse a scope tmux keeps the option elsewhere", async () => {
  await withTmux(async (t, c) => {
    await t.tmux("new-session", "-d", "-s", "other", "sh");
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ name: "status", scope: "pane", target: t.ids.paneId }, /status is a session option/],
      [{ name: "status", scope: "window", target: t.ids.windowId }, /a session option/],
      [{ name: "status", scope: "server" }, /session option.*not as a server option/],
      [{ name: "escape-time", scope: "session", target: "main" }, /escape-time is a server/],
      [{ name: "escape-time", scope: "window", global: true }, /a server option/],
      [{ name: "remain-on-exit", scope: "server" }, /remain-on-exit is a window option/],
      [{ name: "remain-on-exit", scope: "session", target: "main" }, /a window option/],
      [{ name: "status-format[1]", scope: "window", global: true }, /a session option/],
      // A window option tmux keeps per window only: -p would set the pane's whole window.
      [{ name: "mode-keys", scope: "pane", target: t.ids.paneId }, /mode-keys is a window opt/],
    ];
    const values: Record<string, string> = {
      status: "off",
      "escape-time": "7",
      "remain-on-exit": "on",
      "status-format[1]": "x",
      "mode-keys": "vi",
    };
    const dump = async () =>
      [
        await t.tmux("show-options", "-s"),
        await t.tmux("show-options", "-g"),
        await t.tmux("show-options", "-gw"),
        ...await Promise.all(["main", "other"].map((s) => t.tmux("show-options", "-t", s))),
        await t.tmux("show-options", "-w", "-t", t.ids.windowId),
        await t.tmux("show-options", "-p", "-t", t.ids.paneId),
      ].join("\n--\n");
    const before = await dump();
    for (const [args, refusal] of cases) {
      const set = await c.fail("set_option", { ...args, value: values[args.name as string] });
      assert.match(set, refusal, `set ${JSON.stringify(args)}: ${set}`);
      assert.match(set, /Use scope/);
      const show = await c.fail("show_option", args);
      assert.match(show, refusal, `show ${JSON.stringify(args)}: ${show}`);
    }
    assert.equal(await dump(), before, "nothing was set anywhere");

    // Where tmux keeps them, they go through; pane-capable window options per pane too; user
    // options anywhere.
    const ok: Record<string, unknown>[] = [
      { name: "escape-time", value: "7", scope: "server" },
      { name: "status", value: "off", scope: "session", target: "other" },
      { name: "remain-on-exit", value: "on", scope: "pane", target: t.ids.paneId },
      { name: "remain-on-exit", value: "on", scope: "window", target: t.ids.windowId },
      { name: "mode-keys", value: "vi", scope: "pane", global: true },
      { name: "@u", value: "1", scope: "server" },
      { name: "@u", value: "2", scope: "pane", target: t.ids.paneId },
    ];
    for (const args of ok) {
      const r = await c.ok<{ value: string; set: boolean }>("set_option", args);
      assert.equal(r.value, args.value);
      assert.equal(r.set, true);
      const { value: _value, ...where } = args;
      assert.equal((await c.ok<{ value: string }>("show_option", where)).value, args.value);
    }
    assert.equal(await t.tmux("show-options", "-sv", "escape-time"), "7\n");
    assert.equal(await t.tmux("show-options", "-v", "-t", "other", "status"), "off\n");
    assert.equal(await t.tmux("show-options", "-v", "-t", "main", "status"), "");
    assert.equal(
      await t.tmux("show-options", "-pv", "-t", t.ids.paneId, "remain-on-exit"),
      "on\n",
    );
  });
});

Deno.test("a user option named '@z\\nstatus-left' does not pass status-left off as a server option", async () => {
  await withTmux(async (t, c) => {
    await t.attach("main");
    // tmux takes a newline in a user option's name and prints the name raw: `show-options -s`
    // then has a line `status-left x` of its own. Any program in any pane can do this.
    await t.tmux("set-option", "-s", "@z\nstatus-left", "x");
    const refused = await c.fail("set_option", {
      name: "status-left",
      value: "PWNED",
      scope: "server",
    });
    assert.match(refused, /status-left is a session option/);
    assert.equal(
      await t.tmux("show-options", "-t", "main", "-q", "--", "status-left"),
      "",
      "the watched session's status line was not changed",
    );
    // Nor is a wrong table remembered: after a read at the wrong scope, the right one is taken.
    await t.tmux("new-session", "-d", "-s", "other", "sh");
    await t.tmux("set-option", "-s", "@z\nstatus-right", "x");
    await c.fail("show_option", { name: "status-right", scope: "server" });
    await c.ok("set_option", {
      name: "status-right",
      value: "ok",
      scope: "session",
      target: "other",
    });
    assert.equal(await t.tmux("show-options", "-t", "other", "-v", "--", "status-right"), "ok\n");
  });
});

Deno.test("show_options lists no option a user option's name forged, and that name whole", async () => {
  await withTmux(async (t, c) => {
    await t.tmux("set-option", "-t", "main", "@n\nstatus", "off");
    await t.tmux("set-option", "-t", "main", "@m x\n@k", "v");
    await t.tmux("set-option", "-t", "main", "@j\nfoo bar", "a b");
    await t.tmux("set-option", "-t", "main", "@plain", "1");
    await t.tmux("set-option", "-t", "main", "status-right", "r");
    // More user options than the questions a listing may ask beyond one for each.
    await t.tmux(
      ...Array.from({ length: 80 }, (_, i) => [";", "set-option", "-t", "main", `@u${i}`, "x"])
        .flat().slice(1),
    );
    assert.equal(await t.tmux("show-options", "-t", "main", "-q", "--", "status"), "");
    for (const includeInherited of [false, true]) {
      const listed = await c.ok<{ complete: boolean; options: { name: string; value: string }[] }>(
        "show_options",
        { scope: "session", target: "main", includeInherited },
      );
      assert.equal(listed.complete, true);
      assert.equal(listed.options.filter((o) => /^@u\d+$/.test(o.name)).length, 80);
      const named = (name: string) => listed.options.filter((o) => o.name === name);
      assert.deepEqual(
        named("status").map((o) => o.value),
        includeInherited ? ["on"] : [],
        "session main has no status of its own, yet show_options says it is set to off",
      );
      assert.deepEqual(named("@n\nstatus").map((o) => o.value), ["off"]);
      assert.deepEqual(named("@m x\n@k").map((o) => o.value), ["v"]);
      assert.deepEqual(named("@j\nfoo bar").map((o) => o.value), ["a b"]);
      assert.deepEqual(named("@plain").map((o) => o.value), ["1"]);
      assert.deepEqual(named("status-right").map((o) => o.value), ["r"]);
      assert.deepEqual(named("@m"), []);
      assert.deepEqual(named("@k"), []);
    }
    // A name tmux would take too many questions to confirm: the listing stops short, says so,
    // and still shows no line of it as an option.
    await t.tmux("new-session", "-d", "-s", "other", "sh");
    await t.tmux("set-option", "-t", "other", `@q${"\nx x x x x x x x".repeat(10)}\nstatus`, "off");
    const short = await c.call("show_options", { scope: "session", target: "other" });
    const text = short.content?.[0]?.type === "text" ? short.content[0].text : "";
    assert.notEqual(short.isError, true, text);
    const data = short.structuredContent as { complete: boolean; options: { name: string }[] };
    assert.equal(data.complete, false);
    assert.deepEqual(data.options.filter((o) => o.name === "status"), []);
    assert.match(text, /12 more lines of tmux's listing left out/);
  });
});

Deno.test("set_option says when tmux applies an option only to what is made from now on", async () => {
  await withTmux(async (t, c) => {
    const summary = async (args: Record<string, unknown>) => {
      const r = await c.call("set_option", args);
      const text = r.content?.[0]?.type === "text" ? r.content[0].text : "";
      assert.notEqual(r.isError, true, text);
      return text.split("\n")[0];
    };
    const limit = (pane: string) =>
      t.tmux("display-message", "-p", "-t", pane, "#{history_limit}").then((s) => s.trim());
    await t.tmux("split-window", "-d", "-t", t.ids.paneId, "sh");
    await t.tmux("new-session", "-d", "-s", "other", "sh");
    assert.match(
      await summary({ name: "history-limit", value: "100", scope: "session", target: "main" }),
      /^history-limit = "100" in session \$\d+\. tmux applies history-limit only to panes created from now on; the 2 panes already in session \$\d+ keep what they had\.$/,
    );
    // As said: the session's existing panes keep 2000, a pane made since gets 100.
    assert.equal(await limit(t.ids.paneId), "2000");
    const made = (await t.tmux("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", "main"))
      .trim();
    assert.equal(await limit(made), "100");
    assert.match(
      await summary({ name: "history-limit", scope: "session", global: true, value: "50" }),
      /only to panes created from now on; the 4 panes already on this server keep what they had\.$/,
    );
    assert.match(
      await summary({ name: "default-terminal", value: "xterm", scope: "server" }),
      /only to panes created or respawned from now on; the 4 panes already on this server/,
    );
    assert.match(
      await summary({ name: "base-index", value: "3", scope: "session", target: "other" }),
      /only to windows created from now on; the window already in session \$\d+ keeps what it had\.$/,
    );
    assert.equal(
      (await t.tmux("list-windows", "-t", "other", "-F", "#{window_index}")).trim(),
      "0",
    );
    // Options tmux applies to what exists say nothing of the kind.
    for (
      const args of [
        { name: "remain-on-exit", value: "on", scope: "window", target: t.ids.windowId },
        { name: "escape-time", value: "5", scope: "server" },
      ]
    ) {
      assert.doesNotMatch(await summary(args), /from now on/);
    }
    // A client's terminal description is read when it attaches. (With a person attached, a
    // server option is set only as a view change may be: --allow-attended-input here.)
    assert.match(
      await summary({ name: "terminal-features", value: "xterm*:sync", scope: "server" }),
      /only to clients that attach from now on\.$/,
    );
    await t.attach("other");
    assert.match(
      await summary({ name: "terminal-overrides", value: "xterm*:Smulx=x", scope: "server" }),
      /only to clients that attach from now on; the client already attached keeps what it had\.$/,
    );
  }, { allowAttendedInput: true });
});

Deno.test("set_option on an array option without an index says it replaced the array", async () => {
  await withTmux(async (t, c) => {
    const before = await t.tmux("show-options", "-s", "--", "terminal-features");
    assert.ok(before.split("\n").filter((l) => l !== "").length > 1, "tmux has several entries");
    const result = await c.call("set_option", {
      name: "terminal-features",
      value: "foo*:RGB",
      scope: "server",
    });
    const text = result.content?.[0]?.type === "text" ? result.content[0].text : "";
    assert.notEqual(result.isError, true, text);
    assert.match(
      text.split("\n")[0],
      /^terminal-features: 1 entry \(\[0\] "foo\*:RGB"\) in server options; set without an index, it replaced the whole array\./,
    );
    const summary = async (args: Record<string, unknown>) => {
      const r = await c.call("set_option", { scope: "server", ...args });
      const text = r.content?.[0]?.type === "text" ? r.content[0].text : "";
      assert.notEqual(r.isError, true, text);
      return text.split("\n")[0];
    };
    assert.match(
      await summary({ name: "terminal-features", value: "a:RGB,b:RGB,c:RGB,d:RGB", append: true }),
      /^terminal-features: 5 entries \(the last 3: \[2\] "b:RGB", \[3\] "c:RGB", \[4\] "d:RGB"\) in server options\./,
    );
    assert.match(
      await summary({ name: "terminal-features", value: "" }),
      /^terminal-features has no entries in server options; set without an index, it replaced/,
    );
    assert.equal(
      await t.tmux("show-options", "-s", "--", "terminal-features"),
      "terminal-features\n",
    );
  });
});

Deno.test("set_option and show_option say an array entry's own value", async () => {
  await withTmux(async (t, c) => {
    const result = await c.call("set_option", {
      name: "status-format[3]",
      value: "#[align=left]three",
      scope: "session",
      target: "main",
    });
    const text = result.content?.[0]?.type === "text" ? result.content[0].text : "";
    assert.notEqual(result.isError, true, text);
    assert.match(text, /^status-format\[3\] = "#\[align=left\]three" in session \$\d+\./);
    const shown = await c.call("show_option", {
      name: "status-format[3]",
      scope: "session",
      target: "main",
    });
    const shownText = shown.content?.[0]?.type === "text" ? shown.content[0].text : "";
    assert.match(shownText, /^status-format\[3\] = "#\[align=left\]three" \(session/);
    assert.equal(
      await t.tmux("show-options", "-v", "-t", "main", "status-format[3]"),
      "#[align=left]three\n",
    );
    // An index nobody set is not set (tmux itself prints it as set to '').
    const unset = await c.ok<{ set: boolean; entries: unknown[] }>("show_option", {
      name: "status-format[7]",
      scope: "session",
      target: "main",
    });
    assert.equal(unset.set, false);
    assert.deepEqual(unset.entries, []);
  });
});

Deno.test("show_hook keeps the seed contract: snake_case, nullable, entries per index", async () => {
  await withTmux(async (t, c) => {
    const listed = ((await c.client.listTools()).tools as Tool[]).find((x) =>
      x.name === "show_hook"
    );
    assert.ok(listed);
    const props = listed.inputSchema.properties as Record<string, Record<string, unknown>>;
    assert.deepEqual(Object.keys(props).sort(), [
      "global_",
      "hook_name",
      "scope",
      "socket_name",
      "target",
    ]);
    assert.deepEqual(listed.inputSchema.required, ["hook_name"]);
    assert.equal(props.global_.default, false);
    assert.equal(props.scope.default, null);
    assert.equal(props.target.default, null);
    assert.equal(props.socket_name.default, null);
    assert.equal(listed.annotations?.readOnlyHint, true);
    const out = listed.outputSchema?.properties as Record<string, unknown>;
    assert.deepEqual(Object.keys(out), ["entries"]);

    // Unset: zero entries (tmux prints the bare name).
    assert.deepEqual(await c.ok("show_hook", { hook_name: "pane-exited" }), { entries: [] });
    assert.deepEqual(
      await c.ok("show_hook", {
        hook_name: "pane-exited",
        scope: null,
        target: null,
        global_: false,
        socket_name: null,
      }),
      { entries: [] },
    );
    // A plain set-hook lands at index 0; array hooks give one entry per index.
    await t.tmux("set-hook", "-g", "session-renamed", "display-message 'a b;c'");
    await t.tmux("set-hook", "-g", "session-renamed[3]", "set -g @x 1");
    assert.deepEqual(await c.ok("show_hook", { hook_name: "session-renamed" }), {
      entries: [
        { hook_name: "session-renamed", command: 'display-message "a b;c"', index: 0 },
        { hook_name: "session-renamed", command: "set-option -g @x 1", index: 3 },
      ],
    });
    assert.deepEqual(await c.ok("show_hook", { hook_name: "session-renamed[3]" }), {
      entries: [{ hook_name: "session-renamed", command: "set-option -g @x 1", index: 3 }],
    });
    // A window hook set globally is found in the server scope too.
    await t.tmux("set-hook", "-g", "pane-focus-in", "display-message hi");
    assert.equal(
      (await c.ok<{ entries: unknown[] }>("show_hook", { hook_name: "pane-focus-in" })).entries
        .length,
      1,
    );
    // Scopes: a pane's own hook, with the scope inferred from the target's form.
    await t.tmux("set-hook", "-p", "-t", t.ids.paneId, "pane-exited", "display-message bye");
    const pane = { hook_name: "pane-exited", command: "display-message bye", index: 0 };
    assert.deepEqual(
      await c.ok("show_hook", { hook_name: "pane-exited", scope: "pane", target: t.ids.paneId }),
      { entries: [pane] },
    );
    assert.deepEqual(
      await c.ok("show_hook", { hook_name: "pane-exited", target: t.ids.paneId }),
      { entries: [pane] },
    );
    assert.deepEqual(
      await c.ok("show_hook", { hook_name: "pane-exited", global_: true, scope: "window" }),
      {
        entries: [],
      },
    );
    await t.tmux("set-hook", "-t", "main", "after-new-window", "display-message x");
    assert.deepEqual(
      await c.ok("show_hook", { hook_name: "after-new-window", scope: "session", target: "main" }),
      { entries: [{ hook_name: "after-new-window", command: "display-message x", index: 0 }] },
    );

    assert.match(
      await c.fail("show_hook", { hook_name: "nope-hook" }),
      /"nope-hook" is not a hook name \(tmux has no hook by that name; it may be an option/,
    );
    // tmux's show-hooks shows any option by name: an option is not a hook.
    for (const option of ["status", "history-limit", "default-command"]) {
      assert.match(
        await c.fail("show_hook", { hook_name: option, global_: true }),
        /is not a hook name/,
        option,
      );
    }
    // A hook asked of a scope tmux does not keep it at is refused, saying where it lives.
    assert.match(
      await c.fail("show_hook", { hook_name: "window-renamed", scope: "session", target: "main" }),
      /window-renamed is a window hook: tmux keeps it per window, per pane or globally/,
    );
    assert.match(
      await c.fail("show_hook", { hook_name: "session-renamed", target: t.ids.windowId }),
      /session-renamed is a session hook: tmux keeps it per session or globally, not per window/,
    );
    assert.match(await c.fail("show_hook", { hook_name: "x; kill-server" }), /not a hook name/);
    assert.match(
      await c.fail("show_hook", { hook_name: "pane-exited", scope: "pane", target: "%99" }),
      /No pane %99/,
    );
    assert.match(
      await c.fail("show_hook", { hook_name: "session-renamed", scope: "session", target: "nope" }),
      /No session "nope"/,
    );
    assert.match(
      await c.fail("show_hook", { hook_name: "pane-exited", extra: 1 }),
      /Unrecognized key|unknown field/,
    );
  });
});

Deno.test("show_hooks lists global hooks from both of tmux's trees, and a target's own", async () => {
  await withTmux(async (t, c) => {
    await t.tmux("set-hook", "-g", "session-created", "display-message s");
    await t.tmux("set-hook", "-g", "window-renamed", "display-message w");
    const all = await c.ok<{ entries: { hook_name: string }[]; complete: boolean }>("show_hooks");
    assert.deepEqual(all.entries.map((e) => e.hook_name).sort(), [
      "session-created",
      "window-renamed",
    ]);
    assert.equal(all.complete, true);
    await t.tmux("set-hook", "-w", "-t", t.ids.windowId, "window-renamed", "display-message own");
    const own = await c.ok<{ entries: { command: string }[] }>("show_hooks", {
      scope: "window",
      target: t.ids.windowId,
    });
    assert.deepEqual(own.entries.map((e) => e.command), ["display-message own"]);
    assert.match(await c.fail("show_hooks", { scope: "window" }), /need a target/);
  });
});

Deno.test("set_hook whose hook ends the server at once says it was set, and that the server ended", async () => {
  await withTmux(async (t, c) => {
    // tmux runs after-set-hook right after this very set-hook: the server is gone before the
    // hook can be read back. The call did what it was asked; the reply must not say it failed.
    const set = await c.call("set_hook", { name: "after-set-hook", command: "kill-server" });
    const text = set.content?.[0]?.type === "text" ? set.content[0].text : "";
    assert.notEqual(set.isError, true, text);
    assert.match(
      text,
      /^after-set-hook was set in global hooks; the tmux server .* then ended/,
    );
    assert.deepEqual((set.structuredContent as { entries: unknown[] }).entries, []);
    assert.notEqual((await t.tmuxRaw("list-sessions")).code, 0, "the server is gone");
  });
});

Deno.test("set_hook sets, appends and unsets hooks that tmux then runs", async () => {
  await withTmux(async (t, c) => {
    const set = await c.ok<{ entries: unknown[] }>("set_hook", {
      name: "after-rename-window",
      command: "set-option -g @fired 'yes #1;'",
    });
    assert.deepEqual(set.entries, [
      { hook_name: "after-rename-window", command: 'set-option -g @fired "yes #1;"', index: 0 },
    ]);
    await t.tmux("rename-window", "-t", t.ids.windowId, "renamed");
    await waitFor(
      async () => (await t.tmux("show-options", "-gv", "@fired")) === "yes #1;\n",
      "the hook to fire",
    );
    const appended = await c.ok<{ entries: { index: number }[] }>("set_hook", {
      name: "after-rename-window",
      command: "display-message two",
      append: true,
    });
    assert.deepEqual(appended.entries.map((e) => e.index), [0, 1]);
    const one = await c.ok<{ entries: { index: number }[] }>("set_hook", {
      name: "after-rename-window[0]",
      unset: true,
    });
    assert.deepEqual(one.entries.map((e) => e.index), [1]);
    const session = await c.ok<{ entries: unknown[] }>("set_hook", {
      name: "after-new-window",
      command: "display-message here",
      scope: "session",
      target: "main",
    });
    assert.equal(session.entries.length, 1);
    assert.equal(
      (await t.tmux("show-hooks", "-t", "main", "after-new-window")).trim(),
      "after-new-window[0] display-message here",
    );
    assert.match(
      await c.fail("set_hook", { name: "after-new-window", command: "no-such-command x" }),
      /tmux refused/,
    );
    assert.match(
      await c.fail("set_hook", { name: "no-such-hook", command: "display x" }),
      /is not a hook name/,
    );
    // tmux's set-hook sets any option by name; set_hook sets hooks only.
    assert.match(
      await c.fail("set_hook", { name: "status", command: "off", scope: "server" }),
      /"status" is not a hook name .* show_option reads those/,
    );
    assert.equal((await t.tmux("show-options", "-gv", "status")).trim(), "on");
    // A window hook is kept per window: asked for a session, tmux would put it on the
    // session's current window, and the reply would name a place it is not.
    assert.match(
      await c.fail("set_hook", {
        name: "window-renamed",
        command: "display-message hi",
        scope: "session",
        target: "main",
      }),
      /window-renamed is a window hook/,
    );
    assert.equal((await t.tmux("show-hooks", "-w", "-t", t.ids.windowId)).trim(), "");
    const onWindow = await c.ok<{ entries: unknown[] }>("set_hook", {
      name: "window-renamed",
      command: "display-message hi",
      scope: "window",
      target: t.ids.windowId,
    });
    assert.equal(onWindow.entries.length, 1);
    assert.equal(
      (await t.tmux("show-hooks", "-w", "-t", t.ids.windowId)).trim(),
      "window-renamed[0] display-message hi",
    );
    assert.match(
      await c.fail("set_hook", {
        name: "session-renamed",
        command: "display-message hi",
        scope: "pane",
        target: t.ids.paneId,
      }),
      /session-renamed is a session hook: tmux keeps it per session or globally, not per pane/,
    );
    assert.match(await c.fail("set_hook", { name: "pane-exited" }), /Give a command/);
    assert.match(
      await c.fail("set_hook", { name: "pane-exited", scope: "pane" }),
      /Give a command|need a target/,
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Environment

Deno.test("show_environment and set_environment keep values exactly; removal is visible", async () => {
  await withTmux(async (t, c) => {
    for (const [i, value] of TRICKY.entries()) {
      if (value.includes("\u0001")) continue;
      const r = await c.ok<{ value: string; present: boolean }>("set_environment", {
        name: `V${i}`,
        value,
        session: "main",
      });
      assert.equal(r.value, value);
      assert.equal(r.present, true);
    }
    const raw = await t.tmux("show-environment", "-t", "main", "V5");
    assert.equal(raw, `V5=${TRICKY[5]}\n`, "tmux itself holds the exact value");
    const all = await c.ok<{ variables: { name: string; value: string | null }[] }>(
      "show_environment",
      { session: "main" },
    );
    for (const [i, value] of TRICKY.entries()) {
      if (value.includes("\u0001")) continue;
      assert.equal(all.variables.find((v) => v.name === `V${i}`)?.value, value);
    }
    const removed = await c.ok<{ removed: boolean; value: null }>("set_environment", {
      name: "SECRET_TOKEN",
      remove: true,
      session: "main",
    });
    assert.deepEqual([removed.removed, removed.value], [true, null]);
    const one = await c.ok<{ variables: unknown[] }>("show_environment", {
      session: "main",
      name: "SECRET_TOKEN",
    });
    assert.deepEqual(one.variables, [
      {
        name: "SECRET_TOKEN",
        value: null,
        removed: true,
        metadataComplete: true,
        omittedMetadataBytes: 0,
      },
    ]);
    const gone = await c.ok<{ present: boolean }>("set_environment", {
      name: "SECRET_TOKEN",
      unset: true,
      session: "main",
    });
    assert.equal(gone.present, false);
    await c.ok("set_environment", { name: "GLOBAL_ONE", value: "g" });
    assert.equal(await t.tmux("show-environment", "-g", "GLOBAL_ONE"), "GLOBAL_ONE=g\n");
    const global = await c.ok<{ scope: string; variables: { value: string }[] }>(
      "show_environment",
      { name: "GLOBAL_ONE" },
    );
    assert.deepEqual([global.scope, global.variables[0].value], ["global", "g"]);

    assert.match(await c.fail("set_environment", { name: "X" }), /exactly one/);
    assert.match(
      await c.fail("set_environment", { name: "X", value: "1", unset: true }),
      /exactly one/,
    );
    assert.match(await c.fail("set_environment", { name: "1X", value: "1" }), /variable name/);
    assert.match(await c.fail("show_environment", { session: "nope" }), /No session "nope"/);
    const listed = ((await c.client.listTools()).tools as Tool[]).find((x) =>
      x.name === "show_environment"
    );
    assert.match(listed?.description ?? "", /secret/i);
  });
});

// ---------------------------------------------------------------------------------------------
// pipe_pane

Deno.test("pipe_pane copies output to a file with any name, stops, and pipes to a command", async () => {
  await withTmux(async (t, c) => {
    const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-pipe-" });
    try {
      const path = `${dir}/it's #{pane_id} $HOME ;.log`;
      const r = await c.ok<{ piped: boolean }>("pipe_pane", { paneId: t.ids.paneId, path });
      assert.equal(r.piped, true);
      assert.equal(
        await t.tmux("display-message", "-p", "-t", t.ids.paneId, "#{pane_pipe}"),
        "1\n",
      );
      await t.tmux("send-keys", "-t", t.ids.paneId, "-l", "echo piped-$((6*7))");
      await t.tmux("send-keys", "-t", t.ids.paneId, "Enter");
      await waitFor(
        async () => (await Deno.readTextFile(path).catch(() => "")).includes("piped-42"),
        "output in the file",
      );
      const stopped = await c.ok<{ piped: boolean }>("pipe_pane", {
        paneId: t.ids.paneId,
        stop: true,
      });
      assert.equal(stopped.piped, false);
      const copy = `${dir}/copy`;
      await c.ok("pipe_pane", { paneId: t.ids.paneId, command: `cat > '${copy}' # #{pane_id}` });
      await t.tmux("send-keys", "-t", t.ids.paneId, "-l", "echo second");
      await t.tmux("send-keys", "-t", t.ids.paneId, "Enter");
      await waitFor(
        async () => (await Deno.readTextFile(copy).catch(() => "")).includes("second"),
        "output through the command",
      );
      assert.match(await c.fail("pipe_pane", { paneId: t.ids.paneId }), /exactly one/);
      assert.match(
        await c.fail("pipe_pane", { paneId: t.ids.paneId, path: "rel.log" }),
        /absolute/,
      );
      assert.match(await c.fail("pipe_pane", { paneId: "%88", stop: true }), /No pane %88/);
      // A path checked (by a shell tmux runs) before it is piped to, with a newline in it and
      // a final `;`, both of which tmux's command line treats specially.
      await c.ok("pipe_pane", { paneId: t.ids.paneId, stop: true });
      const odd = `${dir}/new\nline #{pane_id};`;
      await c.ok("pipe_pane", { paneId: t.ids.paneId, path: odd });
      await t.tmux("send-keys", "-t", t.ids.paneId, "-l", "echo odd-$((6*7))");
      await t.tmux("send-keys", "-t", t.ids.paneId, "Enter");
      await waitFor(
        async () => (await Deno.readTextFile(odd).catch(() => "")).includes("odd-42"),
        "output in the file with the odd name",
      );
    } finally {
      await t.tmux("pipe-pane", "-t", t.ids.paneId);
      await Deno.remove(dir, { recursive: true });
    }
  });
});

/** Reads `#{pane_pipe}` of `paneId` straight from tmux. */
async function pipeOpen(t: { tmux(...args: string[]): Promise<string> }, paneId: string) {
  return (await t.tmux("display-message", "-p", "-t", paneId, "#{pane_pipe}")).trim() === "1";
}

Deno.test("pipe_pane refuses a path it cannot append to, saying why, and pipes nothing", async () => {
  await withTmux(async (t, c) => {
    const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-pipe-" });
    try {
      // `cat >>` would fail at once and write nothing, while tmux keeps the pipe open until
      // the pane next prints: a reply read right after would say it is piped.
      const missing = `${dir}/no-such-folder/pane.log`;
      const refused = await c.fail("pipe_pane", { paneId: t.ids.paneId, path: missing });
      assert.ok(refused.includes(missing), refused);
      assert.match(refused, /no-such-folder.* does not exist/, refused);
      assert.equal(await pipeOpen(t, t.ids.paneId), false, "no pipe was started");
      assert.equal(await Deno.stat(`${dir}/no-such-folder`).catch(() => null), null);
      assert.match(
        await c.fail("pipe_pane", { paneId: t.ids.paneId, path: dir }),
        /is a folder/,
      );
      assert.equal(await pipeOpen(t, t.ids.paneId), false, "no pipe was started");
      // A FIFO is not opened by the check (that would wait for a reader): its reader gets
      // the output once it opens it.
      const fifo = `${dir}/fifo`;
      await new Deno.Command("mkfifo", { args: [fifo] }).output();
      const piped = await c.ok<{ piped: boolean }>("pipe_pane", {
        paneId: t.ids.paneId,
        path: fifo,
      });
      assert.equal(piped.piped, true);
      // The reader is a process the test can end: a read of the FIFO here would wait for ever
      // on output (or a writer) that never came.
      const reader = sh("grep", ["-m", "1", "fifo-42", fifo], { timeoutMs: 20_000 });
      await t.tmux("send-keys", "-t", t.ids.paneId, "-l", "echo fifo-$((6*7))");
      await t.tmux("send-keys", "-t", t.ids.paneId, "Enter");
      assert.match((await reader).stdout, /fifo-42/);
      await c.ok("pipe_pane", { paneId: t.ids.paneId, stop: true });
    } finally {
      await t.tmux("pipe-pane", "-t", t.ids.paneId);
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("pipe_pane refuses a terminal or any other device as its path: a pane's output drawn on a person's terminal, and the terminal's answers typed there", async () => {
  await withTmux(async (t, c) => {
    // The pane a person watches: its terminal is a path like any other.
    const watched = (await t.tmux("display-message", "-p", "-t", t.ids.paneId, "#{pane_tty}"))
      .trim();
    const other = (await t.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "sh")).trim();
    await t.prompt(other);
    const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-pipe-" });
    try {
      const link = `${dir}/looks-like-a-log`;
      await Deno.symlink(watched, link);
      for (const path of [watched, "/dev/null", "/dev/tty", link]) {
        const refused = await c.fail("pipe_pane", { paneId: other, path });
        assert.match(refused, /is a device/, refused);
        assert.ok(refused.includes(JSON.stringify(path)), refused);
        assert.equal(await pipeOpen(t, other), false, `no pipe was started to ${path}`);
      }
    } finally {
      await t.tmux("pipe-pane", "-t", other);
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("pipe_pane does not replace a pipe a person opened on the pane; stop ends it", async () => {
  await withTmux(async (t, c) => {
    const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-pipe-" });
    const pane = t.ids.paneId;
    try {
      // The person logs the pane they work in (as tmux-logging does), and is watching it.
      const theirs = `${dir}/their-session.log`;
      await t.tmux("pipe-pane", "-t", pane, `cat >> '${theirs}'`);
      await t.attach("main");
      const mine = `${dir}/agent.log`;
      for (const args of [{ path: mine }, { command: `cat > '${mine}'` }]) {
        const refused = await c.fail("pipe_pane", { paneId: pane, ...args });
        assert.match(refused, /already piped/, refused);
        assert.match(refused, /stop: true/, refused);
      }
      await t.tmux("send-keys", "-t", pane, "-l", "echo after-$((6*7))");
      await t.tmux("send-keys", "-t", pane, "Enter");
      await waitFor(
        async () => (await Deno.readTextFile(theirs).catch(() => "")).includes("after-42"),
        "the person's log still receiving the pane's output",
      );
      assert.equal(await Deno.stat(mine).catch(() => null), null, "no file of the agent's");
      // When that is really wanted: stop, then pipe.
      const stopped = await c.ok<{ piped: boolean }>("pipe_pane", { paneId: pane, stop: true });
      assert.equal(stopped.piped, false);
      assert.equal(
        (await c.ok<{ piped: boolean }>("pipe_pane", { paneId: pane, path: mine })).piped,
        true,
      );
    } finally {
      await t.tmux("pipe-pane", "-t", pane);
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("pipe_pane: a pipe opened between its read and its act is not replaced", async () => {
  await withTmux(async (t, c) => {
    const dir = await Deno.makeTempDir({ prefix: "tmux-mcp-pipe-" });
    const pane = t.ids.paneId;
    try {
      const theirs = `${dir}/their-session.log`;
      // Right after the tool's read (which sees no pipe), a person opens one.
      await t.onceAfterGuardRead(`pipe-pane -t ${pane} 'cat >> ${theirs}'`);
      const refused = await c.fail("pipe_pane", { paneId: pane, path: `${dir}/agent.log` });
      assert.match(refused, /already piped/, refused);
      await t.tmux("send-keys", "-t", pane, "-l", "echo after-$((6*7))");
      await t.tmux("send-keys", "-t", pane, "Enter");
      await waitFor(
        async () => (await Deno.readTextFile(theirs).catch(() => "")).includes("after-42"),
        "the person's log still receiving the pane's output",
      );
    } finally {
      await t.tmux("set-hook", "-gu", "after-list-clients").catch(() => "");
      await t.tmux("pipe-pane", "-t", pane);
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("set_option refuses every @tmux-mcp- option: the marks tmux-mcp servers leave for one another", async () => {
  await withTmux(async (t, c) => {
    // A forged lend mark would make the next creation take a person's `latest` for a lent one
    // and set their window-size to manual; a forged channel mark would make signal_channel's
    // warnings lie; a name tmux-mcp gives a mark later is reserved now.
    const attempts: Record<string, unknown>[] = [
      { name: "@tmux-mcp-lent", value: "x", scope: "window", global: true },
      { name: "@tmux-mcp-lent", unset: true, scope: "window", global: true },
      { name: "@tmux-mcp-channel-6275696c64", value: "waiting 1 x", scope: "server" },
      { name: "@tmux-mcp-anything", value: "1", scope: "session", target: t.ids.sessionId },
      { name: "@tmux-mcp-future[3]", value: "1", scope: "pane", target: t.ids.paneId },
    ];
    for (const args of attempts) {
      assert.match(
        await c.fail("set_option", args),
        /names tmux-mcp keeps for the marks its servers leave for one another/,
        JSON.stringify(args),
      );
    }
    assert.equal(await t.tmux("show-options", "-gwv", "@tmux-mcp-lent").catch(() => ""), "");
    assert.equal(
      await t.tmux("show-options", "-s", "@tmux-mcp-channel-6275696c64").catch(() => ""),
      "",
    );
    // Another user option is the caller's to set.
    await c.ok("set_option", { name: "@tmux-mcpx", value: "1", scope: "server" });
  });
});
