import { rmSync } from "node:fs";
import { ActionError } from "../../protocol/errors.js";
import { readWorkspaceFile, writeFileIfChanged } from "./files.js";

/** Whether a generated flake's lock pins the same nixpkgs URL (so it can be kept with --no-update-lock-file). */
export function lockBelongsTo(lockPath: string, url: string): boolean {
  try {
    const lock = JSON.parse(readWorkspaceFile(lockPath)?.toString("utf8") ?? "null");
    const inputs = lock.nodes?.[lock.root]?.inputs ?? {};
    const original = lock.nodes?.[inputs.nixpkgs]?.original;
    if (Object.keys(inputs).join(",") !== "nixpkgs" || !original) return false;
    return flakeUrlOf(original) === url;
  } catch (err) {
    if (err instanceof ActionError) throw err; // not a regular file: say so rather than regenerate over it
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
  writeFileIfChanged(lockPath, before);
}
