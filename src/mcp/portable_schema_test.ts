import assert from "node:assert/strict";
import { z } from "zod";
import * as z4mini from "zod/v4-mini";
import { portabilityProblems, portableSchema } from "./portable_schema.ts";

/** What the SDK makes of a zod object schema for tools/list. */
function listed(schema: z.ZodObject, io: "input" | "output" = "input"): Record<string, unknown> {
  return z4mini.toJSONSchema(schema, { target: "draft-7", io }) as Record<string, unknown>;
}

const SAFE = Number.MAX_SAFE_INTEGER;

Deno.test("nullable values become anyOf branches of one type each, constraints kept", () => {
  const schema = listed(z.strictObject({
    note: z.string().nullable().describe("What was left out."),
    at: z.number().int().min(-3).nullable(),
  }));
  assert.ok(portabilityProblems(schema).length > 0, "zod writes type arrays");
  const out = portableSchema(schema) as { properties: Record<string, unknown> };
  assert.deepEqual(out.properties.note, {
    anyOf: [{ type: "string" }, { type: "null" }],
    description: "What was left out.",
  });
  assert.deepEqual(out.properties.at, {
    anyOf: [{ type: "integer", minimum: -3 }, { type: "null" }],
  });
  assert.deepEqual(portabilityProblems(out), []);
});

Deno.test("a free-form map says additionalProperties: true, not the empty schema", () => {
  const schema = listed(z.strictObject({ args: z.record(z.string(), z.unknown()) }));
  const out = portableSchema(schema) as { properties: { args: unknown } };
  assert.deepEqual(out.properties.args, { type: "object", additionalProperties: true });
  assert.deepEqual(portabilityProblems(out), []);
});

Deno.test("$schema and zod's safe-integer bounds go; bounds that mean something stay", () => {
  const schema = listed(z.strictObject({
    n: z.number().int(),
    lines: z.number().int().min(1).max(10_000),
    count: z.number().int().min(0),
    keys: z.record(z.string().regex(/^[A-Z]+$/), z.string()),
  }));
  assert.equal(schema.$schema, "http://json-schema.org/draft-07/schema#");
  const out = portableSchema(schema) as {
    properties: Record<string, unknown>;
    required: string[];
    additionalProperties: boolean;
  };
  assert.equal("$schema" in out, false);
  assert.deepEqual(out.properties.n, { type: "integer" });
  assert.deepEqual(out.properties.lines, { type: "integer", minimum: 1, maximum: 10_000 });
  assert.deepEqual(out.properties.count, { type: "integer", minimum: 0 });
  assert.deepEqual(out.properties.keys, {
    type: "object",
    propertyNames: { type: "string", pattern: "^[A-Z]+$" },
    additionalProperties: { type: "string" },
  });
  assert.equal(out.additionalProperties, false);
  assert.deepEqual(out.required, ["n", "lines", "count", "keys"]);
});

Deno.test("an output schema is listed as structure: no descriptions, no minimum 0", () => {
  const schema = listed(
    z.strictObject({
      lines: z.number().int().min(0).describe("Lines in text."),
      rows: z.array(z.strictObject({ at: z.number().int().nullable().describe("Where.") })),
    }),
    "output",
  );
  const out = portableSchema(schema, { output: true });
  assert.deepEqual(out, {
    type: "object",
    properties: {
      lines: { type: "integer" },
      rows: {
        type: "array",
        items: {
          type: "object",
          properties: { at: { anyOf: [{ type: "integer" }, { type: "null" }] } },
          required: ["at"],
          additionalProperties: false,
        },
      },
    },
    required: ["lines", "rows"],
    additionalProperties: false,
  });
});

Deno.test("a seeded schema keeps $schema, its safe-integer bounds and its words", () => {
  const schema = listed(
    z.strictObject({ index: z.number().int().describe("The window index.") }),
    "output",
  );
  const out = portableSchema(schema, { asSeeded: true, output: true }) as {
    $schema: string;
    properties: { index: Record<string, unknown> };
  };
  assert.equal(out.$schema, "http://json-schema.org/draft-07/schema#");
  assert.deepEqual(out.properties.index, {
    type: "integer",
    minimum: -SAFE,
    maximum: SAFE,
    description: "The window index.",
  });
});

Deno.test("the input is left untouched", () => {
  const schema = listed(z.strictObject({ note: z.string().nullable() }));
  const before = JSON.stringify(schema);
  portableSchema(schema, { output: true });
  assert.equal(JSON.stringify(schema), before);
});

Deno.test("portabilityProblems finds what the Inspector's --strict check reports", () => {
  assert.deepEqual(portabilityProblems({ type: "object", properties: { a: {} } }), [
    ".properties.a: constrains nothing (accepts any value)",
  ]);
  assert.deepEqual(portabilityProblems({ type: ["string", "null"] }), [
    ': type is an array (["string","null"])',
  ]);
  assert.deepEqual(portabilityProblems({ type: "object", properties: { a: true } }), [
    ".properties.a: bare true where a schema object is expected",
  ]);
  assert.deepEqual(portabilityProblems({ $ref: "https://example.com/s.json" }), [
    ": $ref outside the document (https://example.com/s.json)",
  ]);
  assert.deepEqual(
    portabilityProblems({ type: "object", additionalProperties: true, not: {} }),
    [],
    "a boolean additionalProperties and an empty schema under not are fine",
  );
  assert.deepEqual(
    portabilityProblems({ type: "object", additionalProperties: {} }),
    [".additionalProperties: constrains nothing (accepts any value)"],
  );
});
