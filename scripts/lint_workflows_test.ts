import assert from "node:assert/strict";
import { checkLabels } from "./lint_workflows.ts";

const RELEASE = `jobs:
  build:
    strategy:
      matrix:
        include:
          # macos-13 was the Intel image; a comment never counts
          - { target: x86_64-apple-darwin, os: macos-13 }
          - { target: x86_64-apple-darwin, os: macos-15-intel }
          - { target: aarch64-apple-darwin, os: macos-15 }
    runs-on: \${{ matrix.os }}
  old:
    runs-on: ubuntu-20.04
`;

Deno.test("lint:workflows: a retired runner image fails wherever a job asks for it", () => {
  const problems = checkLabels("release.yml", RELEASE, "2026-01-01");
  assert.deepEqual(problems.map((p) => [p.line, p.column]), [[7, 48], [12, 14]]);
  assert.match(problems[0].message, /"macos-13" was retired on 2025-12-04.*macos-15-intel/);
  assert.match(problems[1].message, /"ubuntu-20.04" was retired/);
  assert.ok(problems.every((p) => p.kind === "retired-runner"));
});

Deno.test("lint:workflows: a newer label passes until its announced end, then fails", () => {
  const only = (text: string, today: string) =>
    checkLabels("w.yml", text, today).map((p) => p.message);
  const intel = "    runs-on: macos-15-intel\n";
  assert.deepEqual(only(intel, "2027-07-31"), []);
  assert.match(only(intel, "2027-08-01")[0], /"macos-15-intel" was announced to go on 2027-08-01/);
  // Labels that merely start like a retired one are other labels.
  assert.deepEqual(
    only("    runs-on: macos-13-arm64x\n    runs-on: my-macos-13\n", "2026-01-01"),
    [],
  );
});
