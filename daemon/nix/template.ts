import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { attrPathToNix } from "./attr-path.js";

const TEMPLATE_FILE = join("nix-templates", "packages", "flake.nix.in");

/** Finds nix-templates/ by walking up from this module (works from sources and from dist/). */
function findTemplate(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, TEMPLATE_FILE);
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`${TEMPLATE_FILE} not found above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

export interface PackagesTemplate {
  text: string;
  version: number;
  /** The template's flake inputs, for state.catalog. */
  inputs: string[];
}

let cached: PackagesTemplate | undefined;

/** The packages flake template and its version (read once; the version is part of every cache key). */
export function packagesTemplate(): PackagesTemplate {
  if (cached) return cached;
  const text = readFileSync(findTemplate(), "utf8");
  const match = /^# hotline-template-version: (\d+)$/m.exec(text);
  if (!match) throw new Error(`${TEMPLATE_FILE} has no "# hotline-template-version: N" line`);
  const inputs = [...text.matchAll(/^\s*inputs\.([A-Za-z0-9_-]+)\.url\s*=/gm)].map((m) => m[1]!);
  cached = { text, version: Number(match[1]), inputs };
  return cached;
}

const FLAKE_URL = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s"\\$]+$/;
const MAX_URL_LENGTH = 2000;

/** Why a nixpkgs flake URL cannot be written into the generated flake, or undefined when it can. */
export function nixpkgsUrlProblem(url: unknown): string | undefined {
  if (typeof url !== "string") return "is not a string";
  if (url.length > MAX_URL_LENGTH) return `is longer than ${MAX_URL_LENGTH} characters`;
  if (!FLAKE_URL.test(url)) return `${JSON.stringify(url)} is not a flake URL (scheme:rest, no spaces, quotes, backslashes or $)`;
  return undefined;
}

/** Renders the flake for validated attribute paths, pinned to one exact nixpkgs flake URL. */
export function renderPackagesFlake(nixpkgsUrl: string, packages: readonly string[]): string {
  const problem = nixpkgsUrlProblem(nixpkgsUrl);
  if (problem) throw new Error(`nixpkgs url ${problem}; it cannot be written into a flake`);
  const lines = packages.map((p) => `            ${attrPathToNix(p)}`).join("\n");
  return packagesTemplate().text.replace("@NIXPKGS_URL@", nixpkgsUrl).replace("@PACKAGES@", lines);
}
