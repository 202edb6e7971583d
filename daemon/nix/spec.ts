import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { ActionError } from "../../protocol/errors.js";
import { writeFileAtomicSync } from "../util/atomic-write.js";
import { readRegularFileSync } from "../util/regular-file.js";
import { checkSpec, type EnvironmentSpec } from "./spec-check.js";

export type { EnvironmentSpec };

/** Where the workspace's own hotline files live. */
export function workspacePaths(workspace: string) {
  const hotline = join(workspace, ".hotline");
  return {
    hotline,
    spec: join(hotline, "environment-spec.json"),
    flakeDir: join(hotline, "nix"),
    flake: join(hotline, "nix", "flake.nix"),
    lock: join(hotline, "nix", "flake.lock"),
  };
}

/** Reads the saved definition; undefined when there is none, `invalid_request` when it is unreadable. */
export function readSpec(workspace: string): EnvironmentSpec | undefined {
  const path = workspacePaths(workspace).spec;
  const text = readRegularFileSync(path, MAX_SPEC_BYTES, { remedy: 'delete it, or pass "packages" or "flake" to replace it' })?.toString(
    "utf8",
  );
  if (text === undefined) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ActionError(
      "invalid_request",
      `${path} is not JSON (${(err as Error).message}); fix or delete the file, or pass "packages" or "flake" to replace it`,
      {
        path: "/workspace",
        details: { file: path },
      },
    );
  }
  return checkSpec(raw, workspace, path);
}

// The daemon writes a few hundred bytes; a repository may carry anything at this path.
const MAX_SPEC_BYTES = 256 * 1024;

/** Saves the definition atomically (only after a successful preparation). */
export function writeSpec(workspace: string, spec: EnvironmentSpec): void {
  const path = workspacePaths(workspace).spec;
  mkdirSync(dirname(path), { recursive: true });
  writeFileAtomicSync(path, `${JSON.stringify(spec, null, 2)}\n`);
}
