import assert from "node:assert/strict";
import { ArgsError, type OptionSpec, parseOptions } from "./args.ts";

const OPTIONS: Record<string, OptionSpec> = {
  socket: { type: "string" },
  ssh: { type: "string", multiple: true },
  audit: { type: "boolean" },
  help: { type: "boolean", short: "h" },
};

Deno.test("parseOptions: values, flags, repeats, short flags", () => {
  assert.deepEqual(parseOptions([], OPTIONS), {});
  assert.deepEqual(parseOptions(["--socket", "a b", "--audit"], OPTIONS), {
    socket: "a b",
    audit: true,
  });
  assert.deepEqual(parseOptions(["--socket=x=y"], OPTIONS), { socket: "x=y" });
  assert.deepEqual(parseOptions(["--audit", "--audit"], OPTIONS), { audit: true });
  assert.deepEqual(parseOptions(["--socket="], OPTIONS), { socket: "" });
  assert.deepEqual(parseOptions(["--socket=-dash"], OPTIONS), { socket: "-dash" });
  assert.deepEqual(parseOptions(["--ssh", "a", "--ssh=b"], OPTIONS), { ssh: ["a", "b"] });
  assert.deepEqual(parseOptions(["-h"], OPTIONS), { help: true });
});

Deno.test("parseOptions: refusals name the culprit", () => {
  const cases: [string[], RegExp][] = [
    [["--bogus"], /^Unknown option '--bogus'$/],
    [["--sockets=a"], /^Unknown option '--sockets' \(did you mean --socket\?\)$/],
    [["--Audit"], /^Unknown option '--Audit' \(did you mean --audit\?\)$/],
    [["-x"], /Unknown option '-x'/],
    [["--constructor"], /Unknown option '--constructor'/],
    [["--__proto__=1"], /Unknown option '--__proto__'/],
    [["--socket"], /'--socket <value>' argument missing/],
    [["--socket", "--audit"], /'--socket <value>' argument is ambiguous.*'--socket=--audit'/],
    [["--audit=yes"], /'--audit' does not take an argument/],
    [["extra"], /Unexpected argument 'extra'/],
    [["--socket", "a", "--socket=b"], /Option '--socket' is given twice; give it once/],
    [["--socket=", "--socket", "a"], /Option '--socket' is given twice/],
    [["--"], /Unexpected argument '--'/],
    [["-"], /Unexpected argument '-'/],
    [["-hh"], /Unexpected argument '-hh'/],
  ];
  for (const [args, pattern] of cases) {
    assert.throws(() => parseOptions(args, OPTIONS), (e: unknown) => {
      assert.ok(e instanceof ArgsError, String(args));
      assert.match(e.message, pattern);
      assert.ok(!e.message.includes("\n"));
      return true;
    });
  }
});
