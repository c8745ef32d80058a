import assert from "node:assert/strict";
import { z } from "zod";
import toolList from "./tool_list.json" with { type: "json" };
import { fieldsAt, unknownKeysHint } from "./field_hints.ts";
import { meantHint, meantName } from "../near_miss.ts";
import { describeIssues } from "./tool_result.ts";
import { listPanes } from "../tools/pane_list.ts";

/** wait_for_text's fields, as listed. */
const WAIT = Object.keys(
  toolList.tools.find((t) => t.name === "wait_for_text")!.inputSchema.properties ?? {},
);

Deno.test("meantName: every field of every tool is found from its other spellings", () => {
  for (const tool of toolList.tools) {
    const known = Object.keys(tool.inputSchema.properties ?? {});
    for (const field of known) {
      const snake = field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
      const camel = field.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
      for (const other of new Set([snake, camel, field.toLowerCase(), field.toUpperCase()])) {
        if (other === field) continue;
        assert.equal(meantName(other, known), field, `${tool.name}: ${other}`);
      }
    }
    // Whatever is suggested is one of the tool's own fields.
    for (const key of ["pattern", "timeout", "pane", "lines", "target", "cmd", "text", "name"]) {
      const meant = meantName(key, known);
      assert.ok(meant === null || known.includes(meant), `${tool.name}: ${key} → ${meant}`);
    }
  }
});

Deno.test("fieldsAt: the known fields where the unknown key sits, through lists and wrappers", () => {
  const schema = z.strictObject({
    name: z.string(),
    operations: z.array(
      z.strictObject({ tool: z.string(), arguments: z.record(z.string(), z.unknown()) }),
    )
      .optional(),
    size: z.strictObject({ width: z.number(), height: z.number() }).nullable().default(null),
  });
  assert.deepEqual(fieldsAt(schema, []), ["name", "operations", "size"]);
  assert.deepEqual(fieldsAt(schema, ["operations", 3]), ["tool", "arguments"]);
  assert.deepEqual(fieldsAt(schema, ["size"]), ["width", "height"]);
  assert.equal(fieldsAt(schema, ["name"]), null);
  assert.equal(fieldsAt(schema, ["operations", 0, "arguments"]), null);
  assert.equal(fieldsAt(schema, ["nothing"]), null);
  assert.equal(fieldsAt(schema, ["toString"]), null, "no inherited name is a field");
  assert.equal(fieldsAt(schema, ["operations", "0"]), null);
});

Deno.test("unknownKeysHint: a guess for each key that has one, the fields where one has none", () => {
  const show = (k: string) => JSON.stringify(k);
  assert.equal(unknownKeysHint(["pattern"], WAIT, show), " (did you mean patterns?)");
  assert.equal(
    unknownKeysHint(["pane_id", "timeout"], WAIT, show),
    ' (did you mean paneId for "pane_id", timeoutMs for "timeout"?)',
  );
  assert.equal(
    unknownKeysHint(["bogus"], ["a", "b"], show),
    " (fields: a, b)",
  );
  assert.equal(
    unknownKeysHint(["pattern", "bogus"], WAIT, show),
    ` (did you mean patterns for "pattern"?; fields: ${WAIT.join(", ")})`,
  );
  assert.equal(unknownKeysHint(["bogus"], [], show), "");
  const many = Array.from({ length: 30 }, (_, i) => `field${i}`);
  assert.match(unknownKeysHint(["zzz"], many, show), /field19, …\)$/);
});

Deno.test("describeIssues names the field meant, and where a nested key sits", () => {
  const schema = listPanes.inputSchema;
  const parsed = schema.safeParse({ sesion: "work", Window: "@1" });
  assert.ok(!parsed.success);
  assert.equal(
    describeIssues(parsed.error, schema),
    "unknown fields sesion, Window (did you mean session for sesion, window for Window?)",
  );
  const bogus = schema.safeParse({ "\u001b[2J": 1 });
  assert.ok(!bogus.success);
  const text = describeIssues(bogus.error, schema);
  assert.match(text, /^unknown field "\\u001b\[2J" \(fields: session, window, socket_name\)$/);
  // Without the schema, as before: the keys alone.
  assert.equal(describeIssues(parsed.error), "unknown fields sesion, Window");
  const nested = z.strictObject({ operations: z.array(z.strictObject({ tool: z.string() })) });
  const inner = nested.safeParse({ operations: [{ tool: "a" }, { tool: "b", tools: 1 }] });
  assert.ok(!inner.success);
  assert.equal(
    describeIssues(inner.error, nested),
    "unknown field tools in operations[1] (did you mean tool?)",
  );
  const word = z.strictObject({ keys: z.array(z.string()) }).safeParse({ keys: "Enter" });
  assert.ok(!word.success);
  assert.equal(describeIssues(word.error), 'keys: expected array, received string (a list: ["…"])');
  const quoted = z.strictObject({ timeoutMs: z.number(), force: z.boolean(), name: z.string() })
    .safeParse({ timeoutMs: "500", force: "true", name: 5 });
  assert.ok(!quoted.success);
  assert.equal(
    describeIssues(quoted.error),
    'timeoutMs: expected number, received string (a number, without quotes: 500, not "500"); ' +
      "force: expected boolean, received string (true or false, without quotes); " +
      "name: expected string, received number",
  );
});

Deno.test("meantHint: the tool a name spelt another way meant, among those on offer", () => {
  const tools = toolList.tools.map((t) => t.name);
  assert.equal(meantHint("capture-pane", tools), " (did you mean capture_pane?)");
  assert.equal(meantHint("tmux_capture_pane", tools), " (did you mean capture_pane?)");
  assert.equal(meantHint("listPanes", tools), " (did you mean list_panes?)");
  assert.equal(meantHint("list_pane", tools), " (did you mean list_panes?)");
  assert.equal(meantHint("list", tools), "", "many tools begin so");
  assert.equal(meantHint("no_such_tool", tools), "");
  assert.equal(meantHint("capture-pane", ["list_panes"]), "", "only a tool on offer");
});
