import assert from "node:assert/strict";
import {
  BOUNDED_SIZES,
  EXPANSION_MAXIMUM,
  FORMAT_NUMBER_MAXIMUM,
  formatNumberProblem,
  formatUseOf,
  GROWTH_MAXIMUM,
  PAD_TOTAL_MAXIMUM,
  PATTERN_MAXIMUM,
  patternCopies,
} from "./format_numbers.ts";

Deno.test("formatNumberProblem passes formats people write", () => {
  for (
    const format of [
      "",
      "plain text; p99999999: =-99999999 e|+|f|99999",
      "#{=20:pane_title}",
      "#{=-20:pane_title}",
      "#{=/20/...:pane_title}",
      // tmux 3.3a trims to any width unharmed.
      "#{=-2147483648:pane_title}",
      "#{=/99999/...:pane_title}",
      "#{=#{@w}:pane_title}",
      "#{p10:window_name}",
      "#{p-10:window_name}",
      "#{p|10|:window_name}",
      `#{p${FORMAT_NUMBER_MAXIMUM}:x}`,
      `#{p-${FORMAT_NUMBER_MAXIMUM}:x}`,
      "#{e|+:1,2}",
      "#{e|*|f|2:1.5,2}",
      "#{e|/|f|100:1,3}",
      "#{e|+|:1,#{window_index}}",
      "#{?window_zoomed_flag,#[reverse]Z#[default],}#{=21:pane_title}",
      "#{s/99999999/x/:window_name}",
      "#{t/f/%H:%M:window_activity}",
      "#{b;=5:pane_current_path}",
      "#{p:x}",
      // "#" after p wraps arguments that never end: tmux pads nothing.
      "#{p#{@w}:x}",
      "#{p|:x}",
      "#(echo '#{p5:x}')",
      "#{p",
      // A block's modifiers end with the block: tmux reads "pane_id" as a name, not "p".
      "#{pane_id} #{=5:x} #{p5:y}",
      "#{pane_index}:#{pane_title};#{e|+:1,2}",
      "#{",
      "}#{{{",
      // Pads to a size tmux bounds itself: a rule as wide as the client (a person's config).
      "#[bg=black,fg=colour240]#{p-#{client_width}:─}",
      "#{=3;p-#{pane_width}:x}",
      "#{p|#{window_width}|:x}",
      "#{p|+#{window_height}|:x}",
      "#{p -#{client_height}:x}",
      "#{e|+|f|#{pane_height}:1,3}",
      "#{T;p-#{status-left-length}:@status}#{p#{status-right-length}:x}",
      "#{?client_width,#{p-#{client_width}:#{?pane_active,─,═}},}",
    ]
  ) {
    assert.equal(formatNumberProblem(format), undefined, format);
    assert.equal(formatNumberProblem(format, "expanded once"), undefined, format);
  }
  for (const name of BOUNDED_SIZES) {
    assert.equal(formatNumberProblem(`#{p-#{${name}}:x}`), undefined, name);
  }
  // The default status-format[0] of tmux 3.3a, which expands status-left: a status line's.
  const line =
    "#[align=left range=left #{status-left-style}]#[push-default]#{T;=/#{status-left-length}:" +
    "status-left}#[pop-default]#[norange default]#[list=on align=#{status-justify}]";
  assert.equal(formatNumberProblem(line, "drawn"), undefined);
  assert.equal(formatNumberProblem(line, "expanded once"), undefined);
});

Deno.test("formatNumberProblem refuses numbers tmux 3.3a crashes or freezes on", () => {
  const cases: [string, RegExp][] = [
    ["#{p-2147483648:x}", /^#\{p-2147483648: asks for a pad width of -2147483648; tmux 3\.3a/],
    ["#{p2147483647:x}", /pad width of 2147483647/],
    ["#{e|+|f|2147483647:1,1}", /^#\{e\|\+\|f\|2147483647: asks for a precision of 2147483647/],
    [`#{p${FORMAT_NUMBER_MAXIMUM + 1}:x}`, /pad width of 10001/],
    ["#{p/-99999/:x}", /pad width of -99999/],
    ["#{=5;p99999:x}", /pad width of 99999/],
    ["#{p+99999:x}", /pad width of 99999/], // "+" wraps the argument
    ["#{p0000000000000099999:x}", /pad width of 0000000000000099999/],
    ["#{p 99999:x}", /pad width of 99999/],
    ["#{p99999999999999999999999999999999999999999999:x}", /pad width of 9{40}\.\.\./],
    // After other modifiers, separated as tmux separates them.
    ["#{b;q;p99999:x}", /pad width of 99999/],
    ["#{s/a/b/;p99999:x}", /pad width of 99999/],
    ["#{==;p99999:x}", /pad width of 99999/],
    ["#{t/p/;p99999:x}", /pad width of 99999/],
    // Nested in a branch, an argument, a loop, a command; after an escape.
    ["#{?1,#{p99999:x},}", /pad width of 99999/],
    ["#{s/a/#{p99999:x}/:x}", /pad width of 99999/],
    ["#{W:#{p99999:x}}", /pad width of 99999/],
    ["#(echo #{p99999:x})", /pad width of 99999/],
    ["##{p99999:x}", /pad width of 99999/],
    // A number tmux learns only by expanding it.
    ["#{p|#{@w}|:x}", /pad width of #\{@w\}, not a plain number/],
    ["#{p-#{l:99999}:x}", /pad width of -#\{l:99999\}, not a plain number/],
    ["#{e|+|f|#{@p}:1,1}", /precision of #\{@p\}, not a plain number/],
    ["#{p\n5:x}", /not a plain number/],
  ];
  for (const [format, reason] of cases) {
    assert.match(formatNumberProblem(format) ?? "(passed)", reason, JSON.stringify(format));
    // Read as a format tmux expands once, only "##{" is text: every other stays refused.
    if (format.startsWith("##")) continue;
    assert.match(
      formatNumberProblem(format, "expanded once") ?? "(passed)",
      reason,
      JSON.stringify(format),
    );
  }
});

Deno.test("formatNumberProblem takes tmux's own sizes for a pad, never a user option's", () => {
  const cases: [string, RegExp][] = [
    // tmux-sidebar's gap: the option may be set to -2147483648 after the check.
    [
      "#{p-#{@tmux_sidebar_width}:x}",
      /pad width of -#\{@tmux_sidebar_width\}, not a plain number nor a size tmux bounds itself/,
    ],
    ["#{p|#{@w}|:x}", /use a literal from -10000 to 10000 or/],
    ["#{p-#{@w}:x}", /one of #\{client_width\}, #\{client_height\}, .*#\{status-right-length\}$/],
    // Sizes tmux does not bound, or more than one size, or one it would first change.
    ["#{p-#{history_limit}:x}", /not a plain number/],
    ["#{p-#{alternate_saved_x}:x}", /not a plain number/],
    ["#{p-#{client_width}#{client_width}:x}", /not a plain number/],
    ["#{p--#{client_width}:x}", /not a plain number/],
    ["#{p-#{=3:client_width}:x}", /not a plain number/],
    ["#{p-#{client_width}0:x}", /not a plain number/],
    ["#{p-#{client_widths}:x}", /not a plain number/],
    ["#{e|+|f|#{@p}:1,1}", /precision of #\{@p\}, not a plain number/],
  ];
  for (const [format, reason] of cases) {
    for (const use of ["stored", "expanded once"] as const) {
      assert.match(formatNumberProblem(format, use) ?? "(passed)", reason, format);
    }
  }
});

Deno.test("formatNumberProblem reads '##' as tmux does in a format tmux expands once", () => {
  // Each expansion turns "##" into "#": after an even run, "{" is text (measured on tmux 3.3a:
  // "##{p5:x}" shows as "#{p5:x}", "###{p5:x}" as "#" and five spaces).
  for (
    const format of [
      "##{p99999:x}",
      "####{p-2147483648:x}",
      "a ##{p99999:x} b #{p5:x}",
      "#{?pane_active,##{p99999:x},}",
      "#{=5:##{p99999:x}}",
      "##(echo ##{p99999:x})",
      "##{E:##{p99999:x#}}",
    ]
  ) {
    assert.equal(formatNumberProblem(format, "expanded once"), undefined, format);
    // Stored, as an option's value or a hook's command, it may be expanded again.
    assert.match(
      formatNumberProblem(format) ?? "(passed)",
      /pad width of .*tmux may expand a stored value more than once\)$/,
      format,
    );
  }
  const refused: [string, RegExp][] = [
    // An odd run: the last "#" opens the block.
    ["###{p99999:x}", /^#\{p99999: asks for a pad width of 99999; tmux 3\.3a/],
    ["#####{p-2147483648:x}", /pad width of -2147483648/],
    ["a###{p99999:x}", /pad width of 99999/],
    // E: and T: expand what they make once more: there "##{" opens a block (measured:
    // "#{E:?session_name,##{p5:x#},}" pads).
    ["#{E:?pane_active,##{p99999:x#},}", /pad width of 99999/],
    ["#{T:##{p99999:x#}}", /pad width of 99999/],
    ["#{E:?pane_active,#{E:?pane_active,####{p99999:x###},},}", /pad width of 99999/],
    ["#{S:#{E:?session_name,##{p99999:x#},}}", /pad width of 99999/],
    // A command may run tmux, which expands what it is given.
    ["#(tmux display -p '##{p99999:x#}')", /pad width of 99999/],
    ["#(echo (##{p99999:x}))", /pad width of 99999/],
    // Arguments wrapped in "#" (tmux may cut a run of "#" there).
    ["#{s#a#####{p99999:x}#:y}", /pad width of 99999/],
  ];
  for (const [format, reason] of refused) {
    assert.match(formatNumberProblem(format, "expanded once") ?? "(passed)", reason, format);
    assert.match(formatNumberProblem(format) ?? "(passed)", reason, format);
  }
  assert.match(
    formatNumberProblem("#{E:?pane_active,##{p99999:x#},}", "expanded once") ?? "",
    /doubling the # keeps it text for one expansion only, and tmux reads this part again/,
  );
  // An odd run is no escape: the refusal says nothing of doubling.
  assert.doesNotMatch(formatNumberProblem("###{p99999:x}", "expanded once") ?? "", /doubling/);
  // Past the end of a part tmux reads again, "##{" is text once more.
  assert.equal(
    formatNumberProblem("#{E:@title} ##{p99999:x} #(date) ##{p99999:x}", "expanded once"),
    undefined,
  );
});

Deno.test("formatNumberProblem reads a long, nested format in bounded time", () => {
  // Every "#{" here opens a block that never closes: read naively, each would scan to the end.
  const open = "#{p1".repeat(16_000);
  assert.match(formatNumberProblem(open) ?? "", /nest too deeply/);
  assert.equal(formatNumberProblem("#{p1:x}".repeat(9_000)), undefined);
  for (const use of ["stored", "expanded once"] as const) {
    assert.match(formatNumberProblem(open, use) ?? "", /nest too deeply/);
    assert.equal(formatNumberProblem(`${"#(".repeat(9_000)}#{p1:x}`, use), undefined);
    // Read through in bounded time; it expands again what a format makes.
    const expansions = formatNumberProblem("#(x)#{E:#{p1:x}}".repeat(5_000), use);
    assert.match(expansions ?? "", /expands again what a format makes/);
    // Read through in bounded time too; past EXPANSION_MAXIMUM expansions of a value.
    assert.match(
      formatNumberProblem("#(x)#{E:@x}".repeat(5_000), "expanded once") ?? "",
      /is expansion 33 of a value/,
    );
    assert.equal(
      formatNumberProblem(`${"#(".repeat(5_000)}${")".repeat(5_000)}#{p1:x}`, use),
      undefined,
    );
  }
});

Deno.test("formatNumberProblem passes ordinary loops, expansions and pads", () => {
  for (
    const format of [
      "#{S:#{session_name} }",
      "#{W:#{window_index} }",
      "#{W:#{window_index}:#{window_name}#{window_flags} ,#[reverse]#{window_index}}",
      "#{S:#{W:#{P:#{pane_id}}}}",
      "#{S:#{W:x}#{W:y}}",
      "#{P:#{pane_id} }#{W:#{window_id}}#{S:#{session_id}}",
      "#{E:@status}",
      "#{T:@status} #{@theme_a} #{@theme_b} #{@theme_c}",
      "#{?pane_active,#{E:@active},}",
      "#{W:#{p3:window_index}#{q:window_name}#{s|/home/me|~|:pane_current_path}}",
      "#{s/a/b/;s/c/d/:#{s/e/f/:x}}",
      `#{p-${FORMAT_NUMBER_MAXIMUM}:x}`.repeat(PAD_TOTAL_MAXIMUM / FORMAT_NUMBER_MAXIMUM),
      "#{S:#{W:#{p10:window_name}}}",
      // Only a stored value's E: may be a link of a chain.
      "##{S:##{S:x}}",
    ]
  ) {
    for (const use of ["stored", "expanded once"] as const) {
      if (format.startsWith("##") && use === "stored") continue;
      assert.equal(formatNumberProblem(format, use), undefined, `${use}: ${format}`);
    }
  }
  // Asked once, a format may expand values again as often as tmux's own status line does.
  for (
    const format of [
      "#{E:status-left}#{E:status-right}",
      "#{T:status-right} #{@theme_a} #{@theme_b} #{@theme_c}",
      "#{W:#{E:window-status-style}#{T:window-status-format}}",
    ]
  ) {
    assert.equal(formatNumberProblem(format, "expanded once"), undefined, format);
  }
});

Deno.test("formatNumberProblem refuses formats that grow as a power, each part small", () => {
  const both: [string, RegExp][] = [
    [
      `${"#{S:".repeat(24)}x${"}".repeat(24)}`,
      /^#\{S: loops over sessions inside a loop over sessions/,
    ],
    ["#{S:#{S:x}}", /loops over sessions inside a loop over sessions/],
    ["#{W:#{W:x}}", /loops over windows inside a loop over windows/],
    ["#{P:#{P:x}}", /loops over panes inside a loop over panes/],
    ["#{W:#{S:x}}", /loops over sessions inside a loop over windows/],
    ["#{P:#{W:x}}", /loops over windows inside a loop over panes/],
    ["#{S:#{?1,#{W:#{=3:#{W:x}}},}}", /windows inside a loop over windows/],
    ["#{W:a,#{W:b}}", /windows inside a loop over windows/],
    // Substitutions and quotes lengthen, nested they multiply.
    [
      `${"#{s/x/xx/:".repeat(12)}#{l:x}${"}".repeat(12)}`,
      /may multiply its length by 729 \(a loop/,
    ],
    [`${"#{q:".repeat(20)}x${"}".repeat(20)}`, /^#\{q: quotes inside 2 other quotes/],
    ["#{S:#{q:#{q:x}}}", /may multiply its length by 400/],
    // A replacement multiplies its subject's length, a value's or a pane's title.
    [`#{s/a/${"x".repeat(65)}/:@b}`, /replaces each match with 65 characters/],
    [
      "#{s/./#{pane_title}/:#{s/./#{pane_title}/:x}}",
      /replaces each match with text a format makes/,
    ],
    // Pads add up: each counted as often as what holds it repeats it.
    [`#{p${FORMAT_NUMBER_MAXIMUM}:x}`.repeat(11), /asks for 110000 cells of padding/],
    ["#{S:#{p1001:x}}", /asks for 100100 cells/],
    ["#{S:#{W:#{P:#{p-#{pane_width}:x}}}}", /asks for 1000000 cells/],
    ["#{e|+|f|10000:1,1}".repeat(11), /asks for 110000 cells/],
  ];
  for (const [format, reason] of both) {
    for (const use of ["stored", "expanded once"] as const) {
      assert.match(formatNumberProblem(format, use) ?? "(passed)", reason, `${use}: ${format}`);
    }
  }
  assert.ok(GROWTH_MAXIMUM < 19683);
  // A stored value expands another at most once, and never where it is repeated: a chain of
  // values then grows with its length.
  const stored: [string, RegExp][] = [
    ["#{E:@e0}#{E:@e0}", /^#\{E: is a second expansion of a value \(E: or T:\) in one value/],
    ["#{T:@a} #{E:@b}", /second expansion/],
    ["#{E:#{E:@a}}", /expands again what a format makes \(E: or T: of #\{E:@a\}/],
    ["#{?1,#{E:@a},#{E:@b}}#{E:@c}", /second expansion/],
    ["#{S:#{E:@a}}", /expands a value again \(E: or T:\) inside a loop/],
    ["#{W:#{T:pane-border-format}}", /inside a loop/],
    ["#{q:#{E:@a}}", /inside a loop, a substitution or a quote/],
    ["#{q;E:@a}", /inside a loop, a substitution or a quote/],
    ["#{s/x/xx/:#{E:@a}}", /inside a loop, a substitution or a quote/],
    ["#{s/x/#{E:@a}/:y}", /replaces each match with text a format makes/],
    // A doubled "#" is text to one expansion only.
    ["##{E:@a}##{E:@a}", /second expansion/],
  ];
  for (const [format, reason] of stored) {
    assert.match(formatNumberProblem(format) ?? "(passed)", reason, format);
  }
  // A number tmux would crash on is named first: that reason says more.
  assert.match(formatNumberProblem("#{S:#{S:#{p99999:x}}}") ?? "", /pad width of 99999/);
});

Deno.test("formatNumberProblem lets a status line's format expand values as tmux's own does", () => {
  // tmux 3.3a's own status-format[0], its window list (a loop expanding values again).
  const line = "#[list=on]#{W:#[range=window|#{window_index} #{E:window-status-style}" +
    "#{?#{&&:#{window_last_flag},#{!=:#{E:window-status-last-style},default}}, " +
    "#{E:window-status-last-style},}]#[push-default]#{T:window-status-format}#[pop-default]" +
    "#{?window_end_flag,,#{window-status-separator}},#[range=window|#{window_index} list=focus " +
    "#{?#{!=:#{E:window-status-current-style},default},#{E:window-status-current-style}," +
    "#{E:window-status-style}}]#[push-default]#{T:window-status-current-format}#[pop-default]}" +
    "#[nolist align=right range=right #{status-right-style}]#[push-default]" +
    "#{T;=/#{status-right-length}:status-right}#[pop-default]";
  assert.equal(formatNumberProblem(line, "drawn"), undefined);
  assert.match(formatNumberProblem(line) ?? "", /inside a loop/);
  // It is a stored value still: nested loops, and what no value may expand, stay refused.
  const refused: [string, RegExp][] = [
    ["#{S:#{S:x}}", /sessions inside a loop over sessions/],
    ["#{E:#{@a}#{@b}}", /expands again what a format makes/],
    ["#{E:?1,#{@a},}", /expands again what a format makes/],
    ["#{T:status-format[1]}", /expands a status line's format again/],
    [`#{p${FORMAT_NUMBER_MAXIMUM}:x}`.repeat(11), /110000 cells/],
    ["##{p99999:x}", /pad width of 99999.*tmux may expand a stored value more than once/],
  ];
  for (const [format, reason] of refused) {
    assert.match(formatNumberProblem(format, "drawn") ?? "(passed)", reason, format);
  }
  // No stored value may expand a status line's format, which may expand it back.
  assert.match(formatNumberProblem("#{E:status-format[0]}") ?? "", /status line's format/);
  assert.equal(formatNumberProblem("#{E:status-format[0]}", "expanded once"), undefined);
});

Deno.test("formatNumberProblem refuses a substitution whose replacement a format makes", () => {
  for (const use of ["stored", "expanded once", "drawn", "drawn part"] as const) {
    // Each match becomes all of the replacement: 6000 x replaced by 6000 x built 3.6e7 bytes.
    for (
      const format of [
        "#{=3:#{s/x/#{@big}/:@big}}",
        "#{s|.|#{pane_title}|:pane_title}",
        "#{s/x/#(cat big)/:@big}",
      ]
    ) {
      assert.match(
        formatNumberProblem(format, use) ?? "(passed)",
        /replaces each match with text a format makes/,
        `${use}: ${format}`,
      );
    }
    for (
      const format of [
        "#{s/bash/sh/:pane_current_command}",
        "#{s|/home/user|~|:pane_current_path}",
        "#{s/(ab)(c)/\\2\\1/:@subject}",
        "#{s/ //:window_name}",
      ]
    ) {
      assert.equal(formatNumberProblem(format, use), undefined, `${use}: ${format}`);
    }
  }
});

Deno.test("formatNumberProblem counts a conditional's larger branch, and lets drawn values expand several", () => {
  // tmux expands one branch only: the larger counts, not both.
  assert.equal(
    formatNumberProblem("#{?client_prefix,#{E:@prefix_style},#{E:@normal_style}}"),
    undefined,
  );
  assert.equal(formatNumberProblem("#{?#{@on},#{E:@a},x#{?1,y,#{T:@b}}}"), undefined);
  // The condition is expanded too, and text after the branches.
  for (
    const format of [
      "#{?#{E:@c},#{E:@a},}",
      "#{?1,#{E:@a},}#{E:@b}",
      "#{?1,x,#{E:@a}#{E:@b}}",
      "#{?1,x,y,#{E:@a}#{E:@b}}",
    ]
  ) {
    assert.match(formatNumberProblem(format) ?? "(passed)", /second expansion/, format);
  }
  // A status line's parts may expand several values, each named once on any path.
  for (const name of ["status-left", "status-right", "window-status-format"]) {
    assert.equal(formatUseOf(name), "drawn part", name);
  }
  assert.equal(formatUseOf("window-status-current-format"), "drawn part");
  assert.equal(formatUseOf("status-format[1]"), "drawn");
  assert.equal(formatUseOf("automatic-rename-format"), "stored");
  assert.equal(formatUseOf("@catppuccin_status_session"), "stored");
  for (
    const format of [
      "#{E:@catppuccin_status_application}#{E:@catppuccin_status_session}",
      "#{?client_prefix,#{E:@prefix_style},#{E:@normal_style}}#{E:@status}x",
      "#{E:@a}#{E:@b}#{E:window-status-style}#{W:#{E:@c}}",
    ]
  ) {
    assert.equal(formatNumberProblem(format, "drawn part"), undefined, format);
  }
  const refused: [string, RegExp][] = [
    ["#{E:@a}#{E:@a}", /expands @a twice/],
    ["#{E:@a}#{?1,#{T:@a},}", /expands @a twice/],
    ["#{E:status-left}", /expands a value tmux draws/],
    ["#{T:window-status-current-format}", /expands a value tmux draws/],
    ["#{E:status-format[0]}", /expands a value tmux draws/],
    ["#{E:pane_title}", /which is no tmux option/],
  ];
  for (const [format, reason] of refused) {
    assert.match(formatNumberProblem(format, "drawn part") ?? "(passed)", reason, format);
  }
  // No stored value expands a drawn one, which may expand several values back.
  for (const name of ["status-left", "status-right", "window-status-format"]) {
    assert.match(formatNumberProblem(`#{E:${name}}`) ?? "", /expands a value tmux draws/);
  }
  // The status line itself may expand its parts, as tmux's own does, but not another line.
  assert.equal(
    formatNumberProblem("#{T:status-left}#{W:#{T:window-status-format}}", "drawn"),
    undefined,
  );
  assert.match(formatNumberProblem("#{E:status-format[1]}", "drawn") ?? "", /status line's format/);
});

Deno.test("formatNumberProblem refuses E: and T: of anything but an option", () => {
  for (const use of ["stored", "expanded once", "drawn", "drawn part"] as const) {
    for (
      const name of [
        "pane_title",
        "pane_current_path",
        "window_name",
        "pane_current_command",
        "host",
      ]
    ) {
      for (const modifier of ["E", "T", "=5;E"]) {
        assert.match(
          formatNumberProblem(`#{${modifier}:${name}}`, use) ?? "(passed)",
          /which is no tmux option/,
          `${use}: ${modifier} ${name}`,
        );
      }
    }
    assert.match(
      formatNumberProblem("#{E:#{pane_title}}", use) ?? "(passed)",
      /expands again what a format makes/,
      use,
    );
    for (
      const format of ["#{E:@x}", "#{T:@x}", "#{E:window-status-style}", "#{E:pane-border-format}"]
    ) {
      assert.equal(formatNumberProblem(format, use), undefined, `${use}: ${format}`);
    }
  }
});

Deno.test("formatNumberProblem refuses back-references in a regular expression's pattern", () => {
  for (const use of ["stored", "expanded once", "drawn", "drawn part"] as const) {
    for (
      const format of [
        "#{m/r:^(.*)(.*)\\2\\1$,abab}",
        "#{m/ir:(a)\\1,x}",
        "#{s/(.*)\\1/x/:@big}",
        "#{s|(a)\\1|x|i:@big}",
        "#{C/r:(a)\\1}",
        "#{m/r:#{@pattern},x}",
        "#{C/r:#{pane_title}}",
        "#{s/#(cat p)/x/:@big}",
      ]
    ) {
      assert.match(
        formatNumberProblem(format, use) ?? "(passed)",
        /regular expression/,
        `${use}: ${format}`,
      );
    }
    for (
      const format of [
        "#{m/r:^(vim|nvim)$,#{pane_current_command}}",
        "#{m:*\\1*,x}",
        "#{C:\\1}",
        "#{s/(a)(b)/\\2\\1/:@big}",
        "#{C/r:err(or)?}",
      ]
    ) {
      assert.equal(formatNumberProblem(format, use), undefined, `${use}: ${format}`);
    }
  }
});

Deno.test("patternCopies multiplies counted repetitions through nesting", () => {
  const cases: [string, { bound: number; nested: number }][] = [
    ["abc", { bound: 0, nested: 1 }],
    ["a{3}", { bound: 3, nested: 3 }],
    ["a{2,}", { bound: 2, nested: 2 }],
    ["(a{1,200}){1,200}b", { bound: 200, nested: 40_000 }],
    ["(a{1,1000}){1,300}", { bound: 1000, nested: 300_000 }],
    ["((a{2}){3}){4}", { bound: 4, nested: 24 }],
    // Loops of the matcher, not copies.
    ["(a*)*b+c?", { bound: 0, nested: 1 }],
    ["(a{1,}){1,}", { bound: 1, nested: 1 }],
    // Side by side they add, not multiply.
    ["a{16}b{16}", { bound: 16, nested: 16 }],
    ["(a{16})(b{16}){2}", { bound: 16, nested: 32 }],
    // Escaped and bracketed characters are atoms, never groups or counts.
    ["\\(a{9}\\){9}", { bound: 9, nested: 9 }],
    ["[(]a{9}[]){]{9}", { bound: 9, nested: 9 }],
    ["[[:alpha:]](x{4}){4}", { bound: 4, nested: 16 }],
    // A "{" that is no count is text.
    ["a{x}{2}", { bound: 2, nested: 2 }],
  ];
  for (const [pattern, copies] of cases) {
    assert.deepEqual(patternCopies(pattern), copies, pattern);
  }
});

Deno.test("formatNumberProblem refuses regular expressions glibc compiles into a huge matcher", () => {
  for (const use of ["stored", "expanded once", "drawn part"] as const) {
    for (
      const format of [
        `#{m/r:(a{1#,200#}){1#,200#}b,${"a".repeat(150)}}`,
        "#{m/r:(a{1#,1000#}){1#,300#},x}",
        "#{C/r:(a{17#}){16#}}",
        "#{s/(a{1#,20#}){1#,20#}/x/:@b}",
        "#{m/r:a{256#},x}",
        `#{m/r:${"a".repeat(PATTERN_MAXIMUM + 1)},x}`,
      ]
    ) {
      assert.match(
        formatNumberProblem(format, use) ?? "(passed)",
        /regular expression's pattern/,
        `${use}: ${format}`,
      );
    }
    for (
      const format of [
        "#{m/r:(a*)*b,aaaa}",
        "#{m/r:^[0-9]{1#,3#}(\\.[0-9]{1#,3#}){3#}$,10.0.0.1}",
        "#{s/(ab){16#}/x/:@b}",
        "#{m/r:a{255#},x}",
        "#{C/r:(a{16#}){16#}}",
      ]
    ) {
      assert.equal(formatNumberProblem(format, use), undefined, `${use}: ${format}`);
    }
  }
});

Deno.test("formatNumberProblem counts every expansion of a value, an index ignored", () => {
  // tmux 3.3a expands all of @a for @a[3]: a user option ignores the index.
  const indexed = Array.from({ length: 3 }, (_, i) => `#{E:@a[${i}]}`).join("");
  assert.match(formatNumberProblem(indexed, "drawn part") ?? "", /expands @a twice/);
  // An array option's items are values of their own.
  assert.equal(
    formatNumberProblem("#{E:@x}#{T:status-format[1]}#{T:status-format[2]}", "expanded once"),
    undefined,
  );
  for (const use of ["drawn", "expanded once"] as const) {
    assert.equal(formatNumberProblem("#{E:@a}".repeat(EXPANSION_MAXIMUM), use), undefined, use);
    assert.match(
      formatNumberProblem("#{E:@a}".repeat(EXPANSION_MAXIMUM + 1), use) ?? "",
      /is expansion 33 of a value/,
      use,
    );
  }
  // A conditional counts its larger branch.
  const half = "#{E:@a}".repeat(20);
  assert.equal(formatNumberProblem(`#{?1,${half},${half}}`, "drawn"), undefined);
});
