/**
 * The published JSON Schemas, shortened for a tool list every turn of an agent carries: the same
 * meaning in fewer bytes (an input schema), or a result schema said in one line of field names.
 */

type Schema = Record<string, unknown>;

const isObject = (v: unknown): v is Schema => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * An input schema without what a tool already says elsewhere or what means nothing to a caller:
 * `$schema`, and the top level's `title` and `description` (the tool's name and the first line of
 * its description). A union of string constants becomes the `enum` it means (TypeBox writes
 * `anyOf: [{const: "a", type: "string"}, …]`). Nothing a caller relies on is dropped.
 */
export function compactInputSchema<T extends Schema>(schema: T): T {
  const { $schema: _schema, title: _title, description: _description, ...rest } = schema;
  return compactNode(rest) as T;
}

function compactNode(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(compactNode);
  if (!isObject(node)) return node;
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) out[key] = compactNode(value);
  const branches = out.anyOf;
  if (
    Array.isArray(branches) &&
    branches.length > 1 &&
    branches.every((b) => isObject(b) && typeof b.const === "string" && Object.keys(b).length <= 2)
  ) {
    const { anyOf: _anyOf, ...others } = out;
    return { ...others, type: "string", enum: branches.map((b) => (b as Schema).const) };
  }
  return out;
}

/**
 * A result schema as the line a tool description carries: its top-level fields by name, an
 * optional one with `?`, a constant with its value (`available: true`), a union as its forms joined
 * by "or". What each field holds is in the guide section the description names.
 */
export function resultShape(schema: Schema, depth = 0): string {
  const forms = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (Array.isArray(forms)) return forms.map((f) => resultShape(f, depth)).join(" or ");
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.type === "array" && isObject(schema.items)) return depth === 0 ? `[${resultShape(schema.items, depth)}]` : "[…]";
  const properties = schema.properties;
  if (!isObject(properties)) return typeof schema.type === "string" ? schema.type : "value";
  if (depth > 0) return "{…}";
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const fields = Object.entries(properties).map(([name, value]) => {
    const optional = required.has(name) ? "" : "?";
    const field = value as Schema;
    if (field.const !== undefined) return `${name}${optional}: ${JSON.stringify(field.const)}`;
    return `${name}${optional}`;
  });
  return `{${fields.join(", ")}}`;
}
