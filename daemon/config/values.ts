import { ActionError } from "../../protocol/errors.js";

/** What a settings row says a value must be (config.ts's Setting): its kind, range and choices. */
export interface ValueRule {
  kind: "string" | "number" | "list";
  min?: number;
  max?: number;
  fraction?: true;
  choices?: readonly string[];
}

/** What a row accepts, in words, for the error naming a wrong value. */
function expected(s: ValueRule): string {
  if (s.kind === "list") return "a list of strings";
  if (s.choices) return `one of ${s.choices.join(", ")}`;
  if (s.kind === "string") return "a non-empty string";
  const min = s.min ?? 0;
  const range = s.max === undefined ? `at least ${min}` : `from ${min} to ${s.max}`;
  return s.fraction ? `a number ${range}` : `a whole number ${range}`;
}

/** Checks a value (already typed: from a file, or parsed from a flag or variable) against its row; `source` names where it came from. */
export function checkValue(s: ValueRule, value: unknown, source: string): string | number | string[] {
  const ok =
    s.kind === "list"
      ? Array.isArray(value) && value.every((v) => typeof v === "string")
      : s.kind === "string"
        ? typeof value === "string" && value !== "" && (!s.choices || s.choices.includes(value))
        : typeof value === "number" &&
          Number.isFinite(value) &&
          (s.fraction || Number.isSafeInteger(value)) &&
          value >= (s.min ?? 0) &&
          value <= (s.max ?? Number.MAX_SAFE_INTEGER);
  if (!ok) throw new ActionError("invalid_request", `${source}: expected ${expected(s)}, got ${JSON.stringify(value) ?? String(value)}`);
  return value as string | number | string[];
}

/** A flag's or variable's text as its row's type, then checked like a file value. */
export function coerce(s: ValueRule, raw: string, source: string): string | number | string[] {
  if (s.kind === "number") return checkValue(s, raw.trim() === "" ? Number.NaN : Number(raw), source);
  if (s.kind === "list")
    return raw
      .split(",")
      .map((v) => v.trim())
      .filter(Boolean);
  return checkValue(s, raw, source);
}
