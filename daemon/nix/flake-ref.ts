import { isAbsolute, relative, resolve } from "node:path";

const FLAKE_REF = /^(\.|\.\/[A-Za-z0-9._/+-]*|\.?[A-Za-z0-9_][A-Za-z0-9._/+-]*)(#[A-Za-z0-9_][A-Za-z0-9_.'+-]*)?$/;

/** A flake ref relative to the workspace, split into its directory and attribute; or why it is not one. */
export function splitFlakeRef(workspace: string, ref: unknown): { dir: string; attr?: string } | { problem: string } {
  const m = typeof ref === "string" ? FLAKE_REF.exec(ref) : null;
  if (!m)
    return {
      problem: `${JSON.stringify(ref)} is not a flake reference relative to the workspace; use e.g. "." , ".#dev" or ".hotline/nix"`,
    };
  const dir = resolve(workspace, m[1]!);
  const rel = relative(workspace, dir);
  if (rel.startsWith("..") || isAbsolute(rel)) return { problem: `${JSON.stringify(ref)} points outside the workspace` };
  return { dir, attr: m[2]?.slice(1) };
}
