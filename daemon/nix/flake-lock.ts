import { readFileSync, rmSync } from "node:fs";
import { writeFileIfChanged } from "./files.js";

/** Whether a generated flake's lock pins the same nixpkgs URL (so it can be kept with --no-update-lock-file). */
export function lockBelongsTo(lockPath: string, url: string): boolean {
  try {
    const lock = JSON.parse(readFileSync(lockPath, "utf8"));
    const inputs = lock.nodes?.[lock.root]?.inputs ?? {};
    const original = lock.nodes?.[inputs.nixpkgs]?.original;
    if (Object.keys(inputs).join(",") !== "nixpkgs" || !original) return false;
    return flakeUrlOf(original) === url;
  } catch {
    return false;
  }
}

/** The flake URL a lock node's `original` stands for, as the generated flake writes it. */
function flakeUrlOf(original: Record<string, string>): string {
  if (original.type === "path") return `path:${original.path}`;
  if (original.type === "github")
    return `github:${original.owner}/${original.repo}${(original.rev ?? original.ref) ? `/${original.rev ?? original.ref}` : ""}`;
  return original.url ?? "";
}

/** Puts the lock back as it was before a failed evaluation (or removes one the failure created). */
export function restoreLock(lockPath: string, before: Buffer | null): void {
  if (before === null) {
    rmSync(lockPath, { force: true });
    return;
  }
  try {
    if (readFileSync(lockPath).equals(before)) return;
  } catch {
    /* gone: write it back */
  }
  writeFileIfChanged(lockPath, before);
}
