import assert from "node:assert/strict";
import { FORMAT_NUMBER_MAXIMUM, formatNumberProblem } from "./format_numbers.ts";

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
      // The default status-format[0] of tmux 3.3a.
      "#[align=left range=left #{status-left-style}]#[push-default]#{T;=/#{status-left-length}:" +
      "status-left}#[pop-default]#[norange default]#[list=on align=#{status-justify}]",
      "#{p",
      // A block's modifiers end with the block: tmux reads "pane_id" as a name, not "p".
      "#{pane_id} #{=5:x} #{p5:y}",
      "#{pane_index}:#{pane_title};#{e|+:1,2}",
      "#{",
      "}#{{{",
    ]
  ) {
    assert.equal(formatNumberProblem(format), undefined, format);
  }
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
  }
});

Deno.test("formatNumberProblem reads a long, nested format in bounded time", () => {
  // Every "#{" here opens a block that never closes: read naively, each would scan to the end.
  const open = "#{p1".repeat(16_000);
  assert.match(formatNumberProblem(open) ?? "", /nest too deeply/);
  assert.equal(formatNumberProblem("#{p1:x}".repeat(9_000)), undefined);
});
