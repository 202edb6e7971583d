import type { ErrorObject } from "ajv";
import { PATTERN_MEANINGS } from "../../protocol/common.js";
import { ActionError } from "../../protocol/errors.js";

/** The export name of an action's validator in the build's generated module (`files.write` → `v_files_write`). */
export function validatorExport(action: string): string {
  return `v_${action.replace(/[^A-Za-z0-9]/g, "_")}`;
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

/**
 * Turns ajv's first failure into invalid_request naming the JSON Pointer of the field; a `job`
 * that is not a job id at all is `not_found` instead.
 */
export function toInvalidRequest(action: string, errors: ErrorObject[] | null | undefined, request?: unknown): ActionError {
  const list = errors ?? [];
  // Inside a union ajv reports each branch; the deepest path is the most useful one to show.
  const deepest = list.reduce<ErrorObject | undefined>(
    (best, e) => (!best || pathOf(e).length > pathOf(best).length ? e : best),
    undefined,
  );
  if (!deepest) return new ActionError("invalid_request", `invalid ${action} request`);
  const path = pathOf(deepest);
  // To an agent a malformed job id and an unknown one mean the same: there is no such job.
  if (path === "/job" && deepest.keyword === "pattern") {
    const pattern = String((deepest.params as Record<string, unknown>).pattern);
    const given = JSON.stringify((request as { job?: unknown } | undefined)?.job).slice(0, 100);
    return new ActionError("not_found", `${action}: no job ${given}: job ids match ${pattern}; jobs.list shows the jobs kept`, { path });
  }
  const sameField = list.filter((e) => pathOf(e) === path).map(describe);
  const message = `${action}: ${path || "request"} ${[...new Set(sameField)].join("; ")}`;
  return new ActionError("invalid_request", message, { path });
}
