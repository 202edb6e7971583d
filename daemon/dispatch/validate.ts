import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { Type } from "@sinclair/typebox";
import { PATTERN_MEANINGS, RequestId } from "../../protocol/common.js";
import type { ActionDefinition } from "../../protocol/define.js";
import { ActionError } from "../../protocol/errors.js";

/**
 * One private ajv, every request schema compiled once at start-up. No coercion, no defaults, and
 * allErrors off (collecting every error of a hostile frame is a denial-of-service risk).
 */
export function compileRequestValidators(actions: readonly ActionDefinition[]): Map<string, ValidateFunction> {
  const ajv = new Ajv({ allErrors: false, coerceTypes: false, useDefaults: false, strict: false });
  const validators = new Map<string, ValidateFunction>();
  for (const action of actions) {
    const schema = Type.Object(
      { id: Type.Optional(RequestId), action: Type.Literal(action.name), ...action.params.properties },
      { additionalProperties: false },
    );
    validators.set(action.name, ajv.compile(schema));
  }
  return validators;
}

function pathOf(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "required") return `${error.instancePath}/${String(params.missingProperty)}`;
  if (error.keyword === "additionalProperties") return `${error.instancePath}/${String(params.additionalProperty)}`;
  return error.instancePath;
}

function describe(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return "is required";
    case "additionalProperties":
      return "is not a field of this action";
    case "const":
      return `must be ${JSON.stringify(params.allowedValue)}`;
    case "anyOf":
      return "does not match any allowed form";
    case "pattern":
      return PATTERN_MEANINGS[String(params.pattern)] ?? error.message ?? error.keyword;
    default:
      return error.message ?? error.keyword;
  }
}

/** Turns ajv's first failure into invalid_request naming the JSON Pointer of the field. */
export function toInvalidRequest(action: string, errors: ErrorObject[] | null | undefined): ActionError {
  const list = errors ?? [];
  // Inside a union ajv reports each branch; the deepest path is the most useful one to show.
  const deepest = list.reduce<ErrorObject | undefined>((best, e) => (!best || pathOf(e).length > pathOf(best).length ? e : best), undefined);
  if (!deepest) return new ActionError("invalid_request", `invalid ${action} request`);
  const path = pathOf(deepest);
  const sameField = list.filter((e) => pathOf(e) === path).map(describe);
  const message = `${action}: ${path || "request"} ${[...new Set(sameField)].join("; ")}`;
  return new ActionError("invalid_request", message, { path });
}
