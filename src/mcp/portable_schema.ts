/**
 * Tool schemas as a model reads them and every client can map them: the JSON Schema the SDK
 * makes of a tool's zod schemas, without zod's noise and in a spelling every client accepts.
 *
 * A client sends every listed tool's input schema to the model, again and again, so a byte of
 * noise there costs many times; and clients that map tool schemas onto narrower dialects (the
 * OpenAPI subset of Gemini's function declarations, for one) reject or weaken a tool whose
 * schema uses `type` arrays or carries schemas that constrain nothing. Nothing here changes
 * what a schema accepts, except the safe-integer range zod writes on every integer (a JSON
 * number this server sends or takes beyond it is not a safe integer anyway, and zod still
 * refuses one on input).
 *
 * @module
 */

/** A JSON Schema node as the SDK's conversion produces it. */
type Node = Record<string, unknown>;

/** What zod writes as the bounds of every `.int()`: JavaScript's safe-integer range. */
const SAFE_INTEGER = Number.MAX_SAFE_INTEGER;

/** Keywords that say something about a value without constraining it. */
const ANNOTATIONS = new Set([
  "title",
  "description",
  "default",
  "examples",
  "deprecated",
  "readOnly",
  "writeOnly",
  "$comment",
]);

/** Keywords holding one subschema. */
const ONE = ["items", "additionalProperties", "propertyNames", "not", "contains"];

/** Keywords holding a list of subschemas. */
const MANY = ["anyOf", "oneOf", "allOf", "prefixItems"];

/** Keywords holding a map of subschemas. */
const MAP = ["properties", "patternProperties", "$defs", "definitions"];

function isNode(value: unknown): value is Node {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** How {@link portableSchema} treats a schema. */
export interface PortableOptions {
  /**
   * Keep `$schema` and the safe-integer bounds: a seed contract prints its schemas with them
   * (seeds 001 and 003), and a seeded tool keeps its schemas exactly as the seed has them.
   */
  readonly asSeeded?: boolean;
  /**
   * The schema is an output schema: a client checks results against it and no model is shown
   * it (a model gets name, description and input schema), so it is listed as structure only —
   * no descriptions (they stay in the code, for its readers) and no `minimum: 0` on integers
   * (a count cannot be negative anyway). A seeded tool's output keeps both.
   */
  readonly output?: boolean;
}

/**
 * A schema as tools/list should carry it: no `$schema`, no safe-integer bounds, nullable
 * values as `anyOf` branches of one `type` each (never a `type` array), free-form maps as
 * `additionalProperties: true` (never the empty schema `{}`), and no `propertyNames` that only
 * says keys are strings (JSON keys always are). Returns a new object; the input is untouched.
 */
export function portableSchema(schema: Node, options: PortableOptions = {}): Node {
  if (options.asSeeded) return rewrite(schema, { dropBounds: false, structureOnly: false });
  const { $schema: _, ...rest } = schema;
  return rewrite(rest, { dropBounds: true, structureOnly: options.output === true });
}

interface Rules {
  readonly dropBounds: boolean;
  readonly structureOnly: boolean;
}

function rewrite(node: Node, rules: Rules): Node {
  let out: Node = {};
  const integer = node.type === "integer" ||
    (Array.isArray(node.type) && node.type.includes("integer"));
  for (const [key, value] of Object.entries(node)) {
    if (
      rules.dropBounds &&
      ((key === "minimum" && value === -SAFE_INTEGER) ||
        (key === "maximum" && value === SAFE_INTEGER))
    ) {
      continue;
    }
    if (rules.structureOnly && key === "description" && typeof value === "string") continue;
    if (rules.structureOnly && integer && key === "minimum" && value === 0) continue;
    if (key === "propertyNames" && isNode(value) && onlyString(value)) continue;
    if (key === "additionalProperties" && isNode(value) && Object.keys(value).length === 0) {
      out[key] = true;
    } else if (ONE.includes(key) && isNode(value)) {
      out[key] = rewrite(value, rules);
    } else if (MANY.includes(key) && Array.isArray(value)) {
      out[key] = value.map((v) => isNode(v) ? rewrite(v, rules) : v);
    } else if (MAP.includes(key) && isNode(value)) {
      out[key] = Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, isNode(v) ? rewrite(v, rules) : v]),
      );
    } else {
      out[key] = value;
    }
  }
  if (Array.isArray(out.type)) out = splitTypes(out);
  return out;
}

function onlyString(node: Node): boolean {
  const keys = Object.keys(node);
  return keys.length === 1 && node.type === "string";
}

/**
 * `{type: ["string", "null"], maxLength: 9, description}` as
 * `{anyOf: [{type: "string", maxLength: 9}, {type: "null"}], description}`: annotations stay
 * on the node, every other keyword goes to each non-null branch (a keyword of another type
 * than a branch's is ignored by JSON Schema there anyway, so this is the same schema).
 */
function splitTypes(node: Node): Node {
  if ("anyOf" in node) throw new Error("a schema with both a type array and anyOf");
  const kept: Node = {};
  const constraints: Node = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "type") continue;
    (ANNOTATIONS.has(key) ? kept : constraints)[key] = value;
  }
  const types = node.type as string[];
  const branches = types.map((type) =>
    type === "null" ? { type } : { type, ...constraintsFor(type, constraints) }
  );
  return { anyOf: branches, ...kept };
}

const FOR_TYPE: Record<string, readonly string[]> = {
  string: ["minLength", "maxLength", "pattern", "format", "enum", "const"],
  integer: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "enum"],
  number: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "enum"],
  array: ["items", "minItems", "maxItems", "uniqueItems", "prefixItems", "contains"],
  object: [
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
  ],
  boolean: ["enum", "const"],
};

function constraintsFor(type: string, constraints: Node): Node {
  const known = FOR_TYPE[type] ?? [];
  const out: Node = {};
  for (const [key, value] of Object.entries(constraints)) {
    if (known.includes(key)) out[key] = value;
    else if (!Object.values(FOR_TYPE).some((keys) => keys.includes(key))) out[key] = value;
  }
  return out;
}

/**
 * Schemas a portable tool list must not carry, as `path: issue` lines: a `type` array, a
 * schema that constrains nothing (`{}`), a bare boolean schema where an object is expected, a
 * `$ref` outside the document. The same rules the MCP Inspector's `--strict` tools/list check
 * applies, so a test can hold the list to them without the Inspector at hand.
 */
export function portabilityProblems(schema: unknown, path = ""): string[] {
  return walk(schema, path, undefined);
}

/** Keywords whose value may be a bare boolean. */
const BOOLEAN_OK = new Set([
  "additionalProperties",
  "unevaluatedProperties",
  "additionalItems",
  "unevaluatedItems",
]);

/** Keywords that constrain a value (after the Inspector's list). */
const CONSTRAINING = new Set([
  "type",
  "enum",
  "const",
  "multipleOf",
  "maximum",
  "exclusiveMaximum",
  "minimum",
  "exclusiveMinimum",
  "maxLength",
  "minLength",
  "pattern",
  "format",
  "contentMediaType",
  "contentEncoding",
  "contentSchema",
  "maxItems",
  "minItems",
  "uniqueItems",
  "maxContains",
  "minContains",
  "maxProperties",
  "minProperties",
  "required",
  "dependentRequired",
  "allOf",
  "anyOf",
  "oneOf",
  "not",
  "items",
  "prefixItems",
  "contains",
  "additionalItems",
  "unevaluatedItems",
  "properties",
  "patternProperties",
  "additionalProperties",
  "unevaluatedProperties",
  "propertyNames",
  "dependentSchemas",
  "dependencies",
  "$ref",
  "$dynamicRef",
  "$recursiveRef",
]);

const SUB_ONE = [
  "items",
  "contains",
  "not",
  "propertyNames",
  "if",
  "then",
  "else",
  "additionalProperties",
  "unevaluatedProperties",
  "additionalItems",
  "unevaluatedItems",
  "contentSchema",
];
const SUB_MANY = ["allOf", "anyOf", "oneOf", "prefixItems"];
const SUB_MAP = [
  "properties",
  "patternProperties",
  "dependentSchemas",
  "dependencies",
  "$defs",
  "definitions",
];

function walk(node: unknown, path: string, keyword: string | undefined): string[] {
  if (typeof node === "boolean") {
    return keyword !== undefined && BOOLEAN_OK.has(keyword)
      ? []
      : [`${path}: bare ${node} where a schema object is expected`];
  }
  if (!isNode(node)) return [];
  const found: string[] = [];
  if (Array.isArray(node.type)) {
    found.push(`${path}: type is an array (${JSON.stringify(node.type)})`);
  }
  if (typeof node.$ref === "string" && node.$ref !== "" && !node.$ref.startsWith("#")) {
    found.push(`${path}: $ref outside the document (${node.$ref})`);
  }
  const constrains = Object.keys(node).some((k) => CONSTRAINING.has(k)) ||
    ("if" in node && ("then" in node || "else" in node));
  if (!constrains && keyword !== "not") {
    found.push(`${path}: constrains nothing (accepts any value)`);
  }
  for (const key of SUB_MAP) {
    const map = node[key];
    if (!isNode(map)) continue;
    for (const [name, sub] of Object.entries(map)) {
      found.push(...walk(sub, `${path}.${key}.${name}`, key));
    }
  }
  for (const key of SUB_MANY) {
    const list = node[key];
    if (!Array.isArray(list)) continue;
    list.forEach((sub, i) => found.push(...walk(sub, `${path}.${key}[${i}]`, key)));
  }
  for (const key of SUB_ONE) {
    if (!(key in node)) continue;
    const value = node[key];
    if (key === "items" && Array.isArray(value)) {
      value.forEach((sub, i) => found.push(...walk(sub, `${path}.items[${i}]`, key)));
    } else {
      found.push(...walk(value, `${path}.${key}`, key));
    }
  }
  return found;
}
