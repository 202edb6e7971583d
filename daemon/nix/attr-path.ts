import { ActionError } from "../../protocol/errors.js";

// One segment: letters, digits, `_`, `-`, `+` (e.g. `gtk+3`), starting with a letter or `_`.
// Everything else — quotes, `${`, spaces, dots at the ends, `..`, empty segments — is refused.
const SEGMENT = /^[A-Za-z_][A-Za-z0-9_+-]*$/;
const MAX_LENGTH = 200;
const MAX_SEGMENTS = 10;
const MAX_PACKAGES = 500;
// Nix keywords cannot be written as bare attribute names; they are emitted quoted.
const KEYWORDS = new Set(["if", "then", "else", "assert", "with", "let", "in", "rec", "inherit", "or", "import"]);

/** Explains why `entry` is not a Nixpkgs attribute path, or returns undefined when it is one. */
export function attrPathProblem(entry: unknown): string | undefined {
  if (typeof entry !== "string") return "is not a string";
  if (entry.length === 0) return "is empty";
  if (entry.length > MAX_LENGTH) return `is longer than ${MAX_LENGTH} characters`;
  const segments = entry.split(".");
  if (segments.length > MAX_SEGMENTS) return `has more than ${MAX_SEGMENTS} segments`;
  for (const segment of segments) {
    if (segment.length === 0) return "has an empty segment (leading, trailing or doubled dot)";
    if (!SEGMENT.test(segment)) return `has the segment ${JSON.stringify(segment)}, which is not a plain attribute name`;
  }
  return undefined;
}

/** Refuses the whole list before anything reaches Nix; the error names the entry and its JSON Pointer. */
export function validatePackages(packages: readonly unknown[], pointer = "/packages"): string[] {
  if (packages.length > MAX_PACKAGES) {
    throw new ActionError("invalid_request", `packages lists ${packages.length} entries; at most ${MAX_PACKAGES} are allowed`, {
      path: pointer,
    });
  }
  packages.forEach((entry, i) => {
    const problem = attrPathProblem(entry);
    if (problem) {
      throw new ActionError(
        "invalid_request",
        `packages[${i}] ${JSON.stringify(entry)} ${problem}; pass Nixpkgs attribute paths such as "nodejs" or "python3Packages.requests"`,
        { path: `${pointer}/${i}` },
      );
    }
  });
  return [...new Set(packages as string[])];
}

/** Writes a validated attribute path as a Nix expression under `pkgs`, quoting keyword segments. */
export function attrPathToNix(path: string, root = "pkgs"): string {
  return [root, ...path.split(".").map((s) => (KEYWORDS.has(s) || s.includes("+") ? `"${s}"` : s))].join(".");
}
