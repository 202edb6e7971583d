import { Ajv, type Options, type ValidateFunction } from "ajv";
import standalone from "ajv/dist/standalone/index.js";
import type { ActionDefinition } from "../../protocol/define.js";
import { requestSchema } from "../../protocol/json-schema.js";
import { validatorExport } from "./validate.js";

/**
 * The one ajv configuration of request validation. No coercion, no defaults, and allErrors off
 * (collecting every error of a hostile frame is a denial-of-service risk).
 */
const AJV_OPTIONS: Options = { allErrors: false, coerceTypes: false, useDefaults: false, strict: false };

/** Every request schema compiled now, by action name: for tests, and a daemon run from a build without its generated validators. */
export function compileRequestValidators(actions: readonly ActionDefinition[]): Map<string, ValidateFunction> {
  const ajv = new Ajv(AJV_OPTIONS);
  const validators = new Map<string, ValidateFunction>();
  for (const action of actions) validators.set(action.name, ajv.compile(requestSchema(action)));
  return validators;
}

/**
 * The source of an ES module with every request validator compiled (ajv's standalone code, with
 * the same options): the build writes it beside validators.js (GENERATED_VALIDATORS), so a daemon starts with no
 * schema to compile (compiling them took 0.4–0.8 s of every start).
 */
export function requestValidatorsModule(actions: readonly ActionDefinition[]): string {
  const ajv = new Ajv({ ...AJV_OPTIONS, code: { source: true, esm: true } });
  const exports: Record<string, string> = {};
  for (const action of actions) {
    ajv.addSchema(requestSchema(action), action.name);
    exports[validatorExport(action.name)] = action.name;
  }
  // ajv's runtime helpers (ucs2length for maxLength) are required by name: an ES module gets a require.
  const header = 'import { createRequire } from "node:module";\nconst require = createRequire(import.meta.url);\n';
  return `${header}${standalone.default(ajv, exports)}\n`;
}
