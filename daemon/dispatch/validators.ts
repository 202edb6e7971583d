import type { ValidateFunction } from "ajv";
import type { ActionDefinition } from "../../protocol/define.js";
import { validatorExport } from "./validate.js";

/** The module the build generates beside this one (compile.ts requestValidatorsModule). */
export const GENERATED_VALIDATORS = "request-validators.js";

/**
 * Every action's request validator: the build's precompiled ones, or, where the build did not
 * write them (a daemon run from sources), compiled now. A generated module that lacks an action is
 * a build out of step with protocol/: the daemon refuses to start rather than run unvalidated.
 */
export async function loadRequestValidators(actions: readonly ActionDefinition[]): Promise<Map<string, ValidateFunction>> {
  let generated: Record<string, ValidateFunction> | undefined;
  try {
    generated = (await import(new URL(GENERATED_VALIDATORS, import.meta.url).href)) as Record<string, ValidateFunction>;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ERR_MODULE_NOT_FOUND") throw err;
  }
  if (!generated) return (await import("./compile.js")).compileRequestValidators(actions);
  const validators = new Map<string, ValidateFunction>();
  for (const action of actions) {
    const validate = generated[validatorExport(action.name)];
    if (typeof validate !== "function")
      throw new Error(`${GENERATED_VALIDATORS} has no validator for ${action.name}: rebuild (npm run build)`);
    validators.set(action.name, validate);
  }
  return validators;
}
