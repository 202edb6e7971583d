import type { Command } from "../command.js";

function print(value: unknown): number {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  return 0;
}

/**
 * `hotline schema [NAME]`: the JSON Schemas published in schemas/, for clients in other languages.
 * No NAME: the index; an action name: its {request, params, result}; otherwise one schema by its
 * file name (`reply`, `error`, `job.exit`, `actions/shell.params` …).
 */
const schema: Command = async ({ args }) => {
  // Every schema is built from protocol/ (TypeBox): loaded by this verb alone.
  const { publishedSchemas } = await import("../../protocol/json-schema.js");
  const files = publishedSchemas();
  const name = args[0];
  if (name === undefined) return print(files.get("index.json"));
  const params = files.get(`actions/${name}.params.json`);
  if (params)
    return print({ request: files.get(`actions/${name}.request.json`), params, result: files.get(`actions/${name}.result.json`) });
  const file = [name, `${name}.json`, `events/${name}.json`].map((path) => files.get(path)).find(Boolean);
  if (file) return print(file);
  const known = [...files.keys()].map((path) => path.replace(/\.json$/, "")).join(", ");
  throw new Error(`schema ${name}: no action or schema of that name; known: ${known}`);
};

export const schemaCommands: Record<string, Command> = { schema };
