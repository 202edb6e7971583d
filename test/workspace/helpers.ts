import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { onTestFinished } from "vitest";
import { Workspace } from "../../daemon/workspace/workspace.js";

/** A fresh workspace root and state dir in a temp directory, deleted when the test finishes. */
export function tempWorkspace(): { ws: Workspace; root: string; stateDir: string; tmp: string } {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "hotline-ws-"));
  onTestFinished(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const root = path.join(tmp, "workspace");
  const stateDir = path.join(tmp, "state");
  return { ws: new Workspace({ root, stateDir }), root, stateDir, tmp };
}

/** Runs git for a test's own setup or assertions (with an identity, hooks off) and returns stdout. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=test", "-c", "user.email=test@example.invalid", ...args], {
    cwd,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? os.tmpdir(), LC_ALL: "C", GIT_CONFIG_NOSYSTEM: "1" },
  });
}

/** Writes a file (creating directories) under a worktree. */
export function writeFile(dir: string, rel: string, text: string): void {
  fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  fs.writeFileSync(path.join(dir, rel), text);
}

/** Expects a promise to reject with an ActionError of `code`; returns the error for more checks. */
export async function rejectsWith(
  promise: Promise<unknown>,
  code: string,
): Promise<{ code: string; message: string; path?: string; details?: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    const e = error as { code?: string; message: string };
    if (e.code !== code) throw new Error(`expected ActionError ${code}, got ${e.code ?? "no code"}: ${e.message}`, { cause: error });
    return error as never;
  }
  throw new Error(`expected ActionError ${code}, but the call succeeded`);
}
