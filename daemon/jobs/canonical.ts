import { createHash } from "node:crypto";
import { canonicalJson } from "../util/canonical-json.js";

/** A job's parameters as one hash, equal for equal parameters whatever their key order. */
export function hashParams(value: unknown): string {
  return createHash("sha256").update(canonicalJson(value)).digest("hex");
}
