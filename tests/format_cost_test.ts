/**
 * Formats whose every number is small but which make tmux 3.3a build more than it survives in
 * time: loops nested in loops (`#{S:#{S:...}}` doubles with each level over two sessions), a
 * chain of user options each expanding the next twice (`#{E:@a}#{E:@a}`), pads that add up.
 * Each is refused before tmux sees it, by display_message, set_option (appended values too)
 * and set_hook; after each refusal tmux still answers, and ordinary formats still pass.
 */

import assert from "node:assert/strict";
import { DRAWN_FIELDS } from "../src/tools/job_state.ts";
import { expansionTimedOut } from "../src/tools/display.ts";
import { TmuxError } from "../src/tmux/tmux_error.ts";
import type { StartedTmux, TestClient } from "./helpers/mcp.ts";
import { withTmux } from "./helpers/mcp.ts";

/** `#{S:` nested `depth` times: 2^depth characters over two sessions. */
function nestedLoops(depth: number): string {
  return `${"#{S:".repeat(depth)}x${"}".repeat(depth)}`;
}

/** tmux answers at once: nothing was left for it to build. */
async function answers(t: StartedTmux): Promise<void> {
  assert.equal(await t.tmux("display-message", "-p", "ok"), "ok\n");
}

/** A server with a second session, so that loops over sessions repeat. */
async function twoSessions(t: StartedTmux): Promise<void> {
  await t.tmux("new-session", "-d", "-s", "second", "sleep 1000");
}

Deno.test("display_message refuses loops nested in loops, and tmux still answers", async () => {
  await withTmux(async (t, c) => {
    await twoSessions(t);
    const text = await c.fail("display_message", {
      format: nestedLoops(24),
      target: t.ids.paneId,
    });
    assert.match(text, /refused: #\{S: loops over sessions inside a loop over sessions/);
    assert.match(text, /Nothing was expanded/);
    await answers(t);
    for (
      const format of ["#{W:#{W:x}}", "#{P:#{W:x}}", "#{W:#{S:x}}", "#{P:#{P:#{pane_id}}}"]
    ) {
      assert.match(
        await c.fail("display_message", { format, target: t.ids.paneId }),
        /inside a loop over/,
        format,
      );
    }
    // Loops, quotes and substitutions nested to multiply a part past the bound.
    assert.match(
      await c.fail("display_message", {
        format: `${"#{s/x/xx/:".repeat(12)}#{l:x}${"}".repeat(12)}`,
        target: t.ids.paneId,
      }),
      /may multiply its length by/,
    );
    await answers(t);
  });
});

Deno.test("display_message still expands ordinary loops and expansions", async () => {
  await withTmux(async (t, c) => {
    await twoSessions(t);
    await t.tmux("set-option", "-g", "status-left", "[#{session_name}]");
    const formats = [
      "#{S:#{session_name} }",
      "#{W:#{window_index} }",
      "#{S:#{W:#{P:#{pane_id}}}}",
      "#{E:status-left}",
      // The default status line's loop expands values again: asked once, that is fine.
      "#{W:#{E:window-status-style}#{T:window-status-format}}",
      "#{p10:x}|#{S:#{p-5:#{session_name}}}",
    ];
    for (const format of formats) {
      const shown = await c.ok<{ text: string }>("display_message", {
        format,
        target: t.ids.paneId,
      });
      const direct = await t.tmux("display-message", "-p", "-t", t.ids.paneId, format);
      assert.equal(`${shown.text}\n`, direct, format);
    }
    assert.equal(
      (await c.ok<{ text: string }>("display_message", {
        format: "#{S:#{session_name} }#{E:status-left}",
        target: t.ids.paneId,
      })).text,
      "main second [main]",
    );
  });
});

Deno.test("set_option refuses an automatic-rename-format of nested loops", async () => {
  await withTmux(async (t, c) => {
    await twoSessions(t);
    const [windowId] = (await t.tmux("list-windows", "-t", "second", "-F", "#{window_id}"))
      .split("\n");
    const before = await t.tmux("show-options", "-wv", "-t", windowId, "automatic-rename-format");
    const text = await c.fail("set_option", {
      name: "automatic-rename-format",
      value: nestedLoops(24),
      scope: "window",
      target: windowId,
    });
    assert.match(text, /loops over sessions inside a loop over sessions/);
    assert.match(text, /Nothing was changed/);
    assert.equal(
      await t.tmux("show-options", "-wv", "-t", windowId, "automatic-rename-format"),
      before,
    );
    await answers(t);
  });
});

Deno.test("set_option refuses a chain of options that doubles at each link", async () => {
  await withTmux(async (t, c) => {
    await c.ok("set_option", { name: "@e0", value: "x", scope: "server" });
    // One expansion of another value is fine: a chain of those grows with its length.
    await c.ok("set_option", { name: "@e1", value: "#{E:@e0}y", scope: "server" });
    await c.ok("set_option", {
      name: "status-left",
      value: "#{E:@e1}",
      scope: "session",
      global: true,
    });
    assert.equal(await t.tmux("display-message", "-p", "#{E:status-left}"), "xy\n");
    // Twice in one value doubles at each link: 2^N from N tiny values.
    const doubling = await c.fail("set_option", {
      name: "@e2",
      value: "#{E:@e1}#{E:@e1}",
      scope: "server",
    });
    assert.match(doubling, /second expansion of a value \(E: or T:\)/);
    assert.match(doubling, /#\{@name\}/);
    assert.equal(await t.tmux("show-options", "-qsv", "@e2"), "");
    // Inside a loop, a substitution or a quote it repeats too.
    for (const value of ["#{S:#{E:@e1}}", "#{s/x/xx/:#{E:@e1}}", "#{q:#{T:@e1}}"]) {
      assert.match(
        await c.fail("set_option", { name: "@e2", value, scope: "server" }),
        /expands a value again \(E: or T:\) inside a loop, a substitution or a quote/,
        value,
      );
    }
    // A status line's format may expand values as tmux's own does, and no value may expand
    // it back: tmux's own, set back as it is, passes; one naming it is refused.
    const line = (await t.tmux("show-options", "-gv", "status-format[0]")).replace(/\n$/, "");
    await c.ok("set_option", {
      name: "status-format[0]",
      value: line,
      scope: "session",
      global: true,
    });
    assert.match(
      await c.fail("set_option", { name: "@e2", value: "#{E:status-format[0]}", scope: "server" }),
      /expands a status line's format again/,
    );
    assert.match(
      await c.fail("set_option", {
        name: "status-format[1]",
        value: "#{W:#{W:#{E:@e1}}}",
        scope: "session",
        global: true,
      }),
      /loops over windows inside a loop over windows/,
    );
    await answers(t);
  });
});

Deno.test("set_option refuses pads that add up, appended a piece at a time", async () => {
  await withTmux(async (t, c) => {
    const piece = "#{p10000:x}".repeat(5);
    await c.ok("set_option", { name: "@pads", value: piece, scope: "server" });
    await c.ok("set_option", { name: "@pads", value: piece, scope: "server", append: true });
    // Each piece is 50000 cells: the third would make 150000 in the value.
    const text = await c.fail("set_option", {
      name: "@pads",
      value: piece,
      scope: "server",
      append: true,
    });
    assert.match(text, /@pads's value with this appended is refused: it asks for 150000 cells/);
    assert.equal(await t.tmux("show-options", "-sv", "@pads"), `${piece}${piece}\n`);
    // At once, too.
    assert.match(
      await c.fail("set_option", {
        name: "@other",
        value: "#{p10000:x}".repeat(5_800),
        scope: "server",
      }),
      /it asks for 58000000 cells/,
    );
    await answers(t);
  });
});

Deno.test("set_hook refuses a command whose format nests loops", async () => {
  await withTmux(async (t, c) => {
    const before = await t.tmux("show-hooks", "-g");
    const text = await c.fail("set_hook", {
      name: "after-rename-window",
      command: `display-message '${nestedLoops(24)}'`,
    });
    assert.match(text, /That hook command is refused: #\{S: loops over sessions/);
    assert.equal(await t.tmux("show-hooks", "-g"), before);
    await answers(t);
  });
});

Deno.test("display_message's timeout says the expansion may have held tmux, not 'try again'", () => {
  const failure = expansionTimedOut(
    new TmuxError("timeout", "tmux did not answer within 10000 ms."),
    "%1",
  );
  assert.ok(failure !== undefined);
  const text = `${failure.message} ${failure.hint}`;
  assert.doesNotMatch(text, /try again/i);
  assert.match(text, /expanding that format/);
  assert.equal(expansionTimedOut(new TmuxError("failed", "no"), "%1"), undefined);
});

Deno.test("a dead pane's read expands no format that expands another (E:@x running #())", async () => {
  await withTmux(async (t, _c: TestClient) => {
    // @x runs a command; a format naming it with E: runs it at each expansion. The marker
    // shows whether the read would have expanded it.
    await t.tmux("set-option", "-g", "@x", "#(true)expanded");
    for (const format of ["#{E:@x}", "a #{=5;E:@x}", "#{T:@x}"]) {
      await t.tmux("set-option", "-g", "remain-on-exit-format", format);
      assert.equal(
        await t.tmux("display-message", "-p", "-t", t.ids.paneId, DRAWN_FIELDS[2]),
        "\n",
        format,
      );
    }
    // A format that expands nothing again is still read.
    await t.tmux("set-option", "-g", "remain-on-exit-format", "[#{@x}]");
    assert.equal(
      await t.tmux("display-message", "-p", "-t", t.ids.paneId, DRAWN_FIELDS[2]),
      "[#(true)expanded]\n",
    );
  });
});

Deno.test("E: and T: name only an option, never text a pane's program sets (its title)", async () => {
  await withTmux(async (t, c) => {
    // A program sets its pane's title (ESC ]2), directory (OSC 7), window name: a title of
    // nested #{S: expanded as a format held every command of the person for seconds.
    const [windowId] = (await t.tmux("list-windows", "-F", "#{window_id}")).split("\n");
    const before = await t.tmux("show-options", "-wv", "-t", windowId, "automatic-rename-format");
    for (const name of ["pane_title", "pane_current_path", "window_name", "pane_current_command"]) {
      for (const modifier of ["E", "T"]) {
        const format = `#{${modifier}:${name}}`;
        const text = await c.fail("set_option", {
          name: "automatic-rename-format",
          value: format,
          scope: "window",
          target: windowId,
        });
        assert.match(text, new RegExp(`expands ${name}, which is no tmux option`), format);
        assert.match(
          await c.fail("display_message", { format, target: t.ids.paneId }),
          /which is no tmux option/,
          format,
        );
      }
    }
    assert.equal(
      await t.tmux("show-options", "-wv", "-t", windowId, "automatic-rename-format"),
      before,
    );
    // Options by their names still expand, tmux's own and user options.
    await t.tmux("set-option", "-g", "@x", "[#{session_name}]");
    assert.equal(
      (await c.ok<{ text: string }>("display_message", {
        format: "#{E:@x}#{T:@x}#{E:status-left-style}",
        target: t.ids.paneId,
      })).text,
      "[main][main]default",
    );
    await c.ok("set_option", {
      name: "automatic-rename-format",
      value: "#{E:@x}",
      scope: "window",
      target: windowId,
    });
    await answers(t);
  });
});

Deno.test("a regular expression's back-references are refused (they backtrack for seconds)", async () => {
  await withTmux(async (t, c) => {
    await t.tmux("set-option", "-g", "@subject", "ababababababababc");
    const backtracking = "^(.*)(.*)(.*)(.*)(.*)(.*)\\6\\5\\4\\3\\2\\1$";
    for (
      const format of [
        `#{m/r:${backtracking},ababababababababc}`,
        `#{m/ri:${backtracking},#{@subject}}`,
        `#{s/${backtracking}/x/:@subject}`,
        `#{C/r:${backtracking}}`,
        // A pattern a format makes may hold one.
        "#{m/r:#{@pattern},x}",
        "#{s/#{pane_title}/x/:@subject}",
      ]
    ) {
      assert.match(
        await c.fail("display_message", { format, target: t.ids.paneId }),
        /regular expression/,
        format,
      );
      assert.match(
        await c.fail("set_option", {
          name: "automatic-rename-format",
          value: format,
          scope: "window",
          global: true,
        }),
        /regular expression/,
        format,
      );
    }
    await answers(t);
    // Back-references in a replacement, and patterns without them, still pass.
    assert.equal(
      (await c.ok<{ text: string }>("display_message", {
        format: "#{s/(ab)(c)/\\2\\1/:@subject}|#{m/r:^(vim|nvim)$,vim}|#{m:*c,@subject}",
        target: t.ids.paneId,
      })).text,
      "abababababababcab|1|0",
    );
  });
});

Deno.test("set_option takes a theme's status line of several options' values", async () => {
  await withTmux(async (t, c) => {
    await t.tmux("set-option", "-g", "@catppuccin_status_application", "[app]");
    await t.tmux("set-option", "-g", "@catppuccin_status_session", "[#{session_name}]");
    // catppuccin's documented status-right, and the same built with append.
    await c.ok("set_option", {
      name: "status-right",
      value: "#{E:@catppuccin_status_application}#{E:@catppuccin_status_session}",
      scope: "session",
      global: true,
    });
    await c.ok("set_option", { name: "status-left", value: "", scope: "session", global: true });
    for (const part of ["#{E:@catppuccin_status_application}", "#{E:@catppuccin_status_session}"]) {
      await c.ok("set_option", {
        name: "status-left",
        value: part,
        scope: "session",
        global: true,
        append: true,
      });
    }
    assert.equal(await t.tmux("display-message", "-p", "#{T:status-left}"), "[app][main]\n");
    // tmux expands one branch of a conditional only.
    await c.ok("set_option", {
      name: "@prefix_left",
      value: "#{?client_prefix,#{E:@prefix_style},#{E:@normal_style}}",
      scope: "server",
    });
    // A value tmux draws expands no other drawn value, and no value expands one of those:
    // each may expand several, and a cycle of them would double at each turn.
    assert.match(
      await c.fail("set_option", {
        name: "window-status-format",
        value: "#{E:status-right}#{E:@x}",
        scope: "window",
        global: true,
      }),
      /expands a value tmux draws/,
    );
    assert.match(
      await c.fail("set_option", { name: "@y", value: "#{E:status-right}", scope: "server" }),
      /expands a value tmux draws/,
    );
    assert.match(
      await c.fail("set_option", {
        name: "status-right",
        value: "#{E:@a}#{E:@a}",
        scope: "session",
        global: true,
      }),
      /expands @a twice/,
    );
    await answers(t);
  });
});

Deno.test("counted repetitions nested in a regular expression are refused (glibc compiles them for seconds)", async () => {
  await withTmux(async (t, c) => {
    // "#," is a comma inside a format; tmux hands the matcher "(a{1,200}){1,200}b".
    const subject = "a".repeat(150);
    for (
      const format of [
        `#{m/r:(a{1#,200#}){1#,200#}b,${subject}}`,
        "#{m/r:(a{1#,1000#}){1#,300#},x}",
        "#{C/r:(a{1#,200#}){1#,200#}b}",
        "#{s/(a{1#,200#}){1#,200#}b/x/:@b}",
        `#{m/r:${"a".repeat(300)},x}`,
      ]
    ) {
      assert.match(
        await c.fail("display_message", { format, target: t.ids.paneId }),
        /regular expression's pattern/,
        format,
      );
      for (const name of ["status-right", "status-format[0]"]) {
        assert.match(
          await c.fail("set_option", { name, value: format, scope: "session", global: true }),
          /regular expression's pattern/,
          `${name}: ${format}`,
        );
      }
      assert.match(
        await c.fail("set_hook", {
          name: "after-rename-window",
          command: `display-message '${format}'`,
        }),
        /regular expression's pattern/,
        format,
      );
      await answers(t);
    }
    // Repetitions the matcher loops over, and small counted ones, still match.
    assert.equal(
      (await c.ok<{ text: string }>("display_message", {
        format: `#{m/r:(a*)*b,${subject}}|#{m/r:^[0-9]{1#,3#}(\\.[0-9]{1#,3#}){3#}$,10.0.0.1}`,
        target: t.ids.paneId,
      })).text,
      "0|1",
    );
  });
});

Deno.test("a value appended to without end, and long replacements and quotes of it, are refused", async () => {
  await withTmux(async (t, c) => {
    const piece = "a".repeat(30_000);
    await c.ok("set_option", { name: "@b", value: piece, scope: "server" });
    await c.ok("set_option", { name: "@b", value: piece, scope: "server", append: true });
    const text = await c.fail("set_option", {
      name: "@b",
      value: piece,
      scope: "server",
      append: true,
    });
    assert.match(text, /@b's value with this appended would be 90000 characters, more than 65536/);
    assert.match(text, /Nothing was changed/);
    assert.equal(await t.tmux("show-options", "-sv", "@b"), `${piece}${piece}\n`);
    // A replacement multiplies its subject: 3000 characters over 88 KB built 264 MB.
    const replaced = `#{s/a/${"x".repeat(3_000)}/:@b}`;
    assert.match(
      await c.fail("display_message", { format: replaced, target: t.ids.paneId }),
      /replaces each match with 3000 characters/,
    );
    await c.ok("set_option", { name: "@s", value: "ok", scope: "server" });
    assert.match(
      await c.fail("set_option", { name: "@s", value: replaced, scope: "server" }),
      /replaces each match with 3000 characters/,
    );
    assert.match(
      await c.fail("display_message", { format: "#{q:#{q:#{q:@b}}}", target: t.ids.paneId }),
      /quotes inside 2 other quotes/,
    );
    await answers(t);
    // A short replacement of a value within the bound is built, and comes back whole.
    const shown = await c.ok<{ text: string; complete: boolean }>("display_message", {
      format: "#{s/a/bb/:@b}",
      target: t.ids.paneId,
    });
    assert.match(shown.text, /^b{1000}/);
  });
});

Deno.test("display_message's lost connection says the expansion may have held tmux, not 'try again'", () => {
  const failure = expansionTimedOut(
    new TmuxError(
      "failed",
      "The connection to tmux was lost while the command was on its way; it may or may not have run.",
    ),
    "%1",
  );
  assert.ok(failure !== undefined);
  const text = `${failure.message} ${failure.hint}`;
  assert.match(text, /expanding that format/);
  assert.match(text, /an answer too long to read ends the connection/);
  assert.match(text, /Do not ask for the same format again/);
});

Deno.test("expansions of a value are counted whatever the index, and in all", async () => {
  await withTmux(async (t, c) => {
    await t.tmux("set-option", "-g", "@a", "#{p10000:}".repeat(10));
    // tmux 3.3a expands all of @a for @a[3]: a user option ignores the index.
    const indexed = Array.from({ length: 1_200 }, (_, i) => `#{E:@a[${i}]}`).join("");
    const before = await t.tmux("show-options", "-gv", "status-right");
    for (
      const [value, reason] of [[indexed, /is expansion 33/], [
        "#{E:@a[0]}#{E:@a[1]}",
        /expands @a twice/,
      ]] as const
    ) {
      assert.match(
        await c.fail("set_option", { name: "status-right", value, scope: "session", global: true }),
        reason,
      );
    }
    assert.equal(await t.tmux("show-options", "-gv", "status-right"), before);
    // A status line's format, and a format asked once, expand values a bounded number of times.
    assert.match(
      await c.fail("set_option", {
        name: "status-format[0]",
        value: "#{E:@a}".repeat(1_500),
        scope: "session",
        global: true,
      }),
      /is expansion 33 of a value/,
    );
    assert.match(
      await c.fail("display_message", { format: "#{E:@a}".repeat(2_300), target: t.ids.paneId }),
      /is expansion 33 of a value/,
    );
    await answers(t);
    // A few are fine.
    const few = await c.ok<{ text: string }>("display_message", {
      format: "#{E:@a[0]}#{E:@a}",
      target: t.ids.paneId,
    });
    assert.match(few.text, /^ {1000,}$/);
  });
});
