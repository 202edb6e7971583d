import { ActionError } from "../../protocol/errors.js";
import { validatePackages } from "./attr-path.js";
import { splitFlakeRef } from "./flake-ref.js";
import type { NixpkgsPin } from "./pin.js";
import { nixpkgsUrlProblem } from "./template.js";

/** The manifest a workspace owns at `.hotline/environment-spec.json` (format documented in the guide). */
export interface EnvironmentSpec {
  version: 1;
  /** Exactly one of `packages` (generated flake) or `flake` (a flake ref relative to the workspace). */
  packages?: string[];
  flake?: string;
  /** The nixpkgs of a package definition; kept across daemon upgrades. For flakes: what the lock says, if known. */
  nixpkgs?: NixpkgsPin;
  system: string;
  cacheKey: string;
  templateVersion?: number;
  createdAt: string;
  updatedAt: string;
  daemonVersion: string;
}

/** A field of the spec that is not what the daemon writes: its JSON Pointer and why. */
class SpecFieldError extends Error {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(problem);
  }
}

const FIELDS = new Set([
  "version",
  "packages",
  "flake",
  "nixpkgs",
  "system",
  "cacheKey",
  "templateVersion",
  "createdAt",
  "updatedAt",
  "daemonVersion",
]);
const PIN_FIELDS = new Set(["url", "rev", "narHash", "lastModified"]);
const SYSTEM = /^[a-z0-9_]+-[a-z0-9_]+$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;
const REV = /^[0-9a-f]{40}$/;
const NAR_HASH = /^sha256-[A-Za-z0-9+/]{43}=$/;

function expect(ok: boolean, field: string, problem: string): void {
  if (!ok) throw new SpecFieldError(field, problem);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function checkString(v: unknown, field: string, max = 200): void {
  expect(
    typeof v === "string" && v.length <= max && !/[\u0000-\u001f]/.test(v),
    field,
    `must be a string of at most ${max} printable characters`,
  );
}

function checkFields(spec: Record<string, unknown>, workspace: string): void {
  for (const key of Object.keys(spec)) expect(FIELDS.has(key), `/${key}`, "is not a field of an environment spec");
  expect(spec.version === 1, "/version", "must be 1");
  expect(
    (spec.packages === undefined) !== (spec.flake === undefined),
    "/packages",
    'exactly one of "packages" and "flake" must be present',
  );
  if (spec.packages !== undefined) {
    expect(Array.isArray(spec.packages), "/packages", "must be an array of Nixpkgs attribute paths");
    try {
      validatePackages(spec.packages as unknown[]);
    } catch (err) {
      throw new SpecFieldError((err as ActionError).path ?? "/packages", (err as Error).message);
    }
  }
  if (spec.flake !== undefined) {
    const parsed = splitFlakeRef(workspace, spec.flake);
    if ("problem" in parsed) throw new SpecFieldError("/flake", parsed.problem);
  }
  if (spec.nixpkgs !== undefined) {
    const pin = spec.nixpkgs;
    expect(isObject(pin), "/nixpkgs", "must be an object {url, rev?, narHash?, lastModified?}");
    const p = pin as Record<string, unknown>;
    for (const key of Object.keys(p)) expect(PIN_FIELDS.has(key), `/nixpkgs/${key}`, "is not a field of a nixpkgs pin");
    // A flake's spec records what its lock says, with no URL of its own ("").
    const urlProblem = spec.flake !== undefined && p.url === "" ? undefined : nixpkgsUrlProblem(p.url);
    if (urlProblem) throw new SpecFieldError("/nixpkgs/url", urlProblem);
    if (p.rev !== undefined) expect(typeof p.rev === "string" && REV.test(p.rev), "/nixpkgs/rev", "must be a 40-digit hex git revision");
    if (p.narHash !== undefined)
      expect(typeof p.narHash === "string" && NAR_HASH.test(p.narHash), "/nixpkgs/narHash", 'must be an SRI hash "sha256-…="');
    if (p.lastModified !== undefined)
      expect(
        Number.isSafeInteger(p.lastModified) && (p.lastModified as number) >= 0,
        "/nixpkgs/lastModified",
        "must be a non-negative integer",
      );
  }
  expect(typeof spec.system === "string" && SYSTEM.test(spec.system), "/system", 'must be a Nix system such as "x86_64-linux"');
  expect(typeof spec.cacheKey === "string" && SHA256_HEX.test(spec.cacheKey), "/cacheKey", "must be 64 lowercase hex digits");
  if (spec.templateVersion !== undefined)
    expect(
      Number.isSafeInteger(spec.templateVersion) && (spec.templateVersion as number) > 0,
      "/templateVersion",
      "must be a positive integer",
    );
  for (const key of ["createdAt", "updatedAt"]) {
    const v = spec[key];
    expect(typeof v === "string" && v.length <= 40 && !Number.isNaN(Date.parse(v)), `/${key}`, "must be an ISO 8601 time");
  }
  checkString(spec.daemonVersion, "/daemonVersion");
}

/**
 * Checks a spec read from disk with the rules a request gets (a cloned repository can carry one):
 * nothing of it reaches a generated flake, a cache path or Nix unchecked. Refuses with
 * `invalid_request` naming the file and the field (`details.field` is its JSON Pointer in the file).
 */
export function checkSpec(raw: unknown, workspace: string, file: string): EnvironmentSpec {
  try {
    expect(isObject(raw), "", "must be a JSON object");
    checkFields(raw as Record<string, unknown>, workspace);
    return raw as unknown as EnvironmentSpec;
  } catch (err) {
    if (!(err instanceof SpecFieldError)) throw err;
    const where = err.field === "" ? "" : ` field ${err.field}`;
    throw new ActionError(
      "invalid_request",
      `${file}${where} is refused: ${err.message}; fix or delete the file, or pass "packages" or "flake" to replace it`,
      {
        path: "/workspace",
        details: { file, field: err.field },
      },
    );
  }
}
