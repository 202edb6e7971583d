import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { RunContext } from "../runners/context.js";
import { execNix, runNix } from "../runners/nix-cli.js";

interface ArchiveNode {
  path?: string;
  inputs?: Record<string, ArchiveNode>;
}

function collect(node: ArchiveNode, out: Set<string>): void {
  if (node.path) out.add(node.path);
  for (const input of Object.values(node.inputs ?? {})) collect(input, out);
}

/**
 * The store paths of a flake and every input it was evaluated with (`nix flake archive`), fetched
 * into the store if they are not there, without changing its lock. Not `--dry-run`: an evaluation
 * answered from Nix's eval cache (in the home, which outlives the store) reads no input, so inputs
 * the store lost would stay lost, and rooting and publishing them would fail. Empty when Nix cannot
 * say (a warning goes to the job's output).
 */
export async function flakeInputPaths(
  ctx: RunContext,
  flakeRef: string,
  extraArgs: readonly string[],
  env: NodeJS.ProcessEnv | undefined,
): Promise<string[]> {
  try {
    const res = await runNix(ctx, {
      args: ["flake", "archive", "--json", "--no-update-lock-file", ...extraArgs, flakeRef],
      env,
      maxStdoutBytes: 4 * 1024 * 1024,
    });
    if (res.exitCode !== 0) throw new Error(res.errorMessage ?? `exit code ${res.exitCode}`);
    const paths = new Set<string>();
    collect(JSON.parse(res.stdout) as ArchiveNode, paths);
    return [...paths];
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    ctx.output("stderr", `warning: could not list the flake's inputs (they are not rooted or published): ${(err as Error).message}\n`);
    return [];
  }
}

/**
 * Roots the flake inputs beside the environment's own root (`<root>.inputs/set-XXXXXX/in`, `in-2`,
 * …), so garbage collection keeps what re-evaluating the environment needs. Replaces an older set,
 * but only once the new one is complete: a failing nix-store leaves the old roots in place.
 */
export async function rootFlakeInputs(
  ctx: Pick<RunContext, "signal">,
  root: string,
  paths: readonly string[],
  env: NodeJS.ProcessEnv | undefined,
): Promise<void> {
  const dir = inputsRootDir(root);
  if (paths.length === 0) {
    rmSync(dir, { recursive: true, force: true });
    return;
  }
  mkdirSync(dir, { recursive: true });
  // Nix registers each root by the path of its link (an indirect root), so a finished set cannot be
  // renamed into place: it is made in a fresh subdirectory, and the older sets go once it is done.
  const fresh = mkdtempSync(join(dir, "set-"));
  try {
    await execNix("nix-store", ["--add-root", join(fresh, "in"), "--realise", ...paths], { env, signal: ctx.signal });
  } catch (err) {
    rmSync(fresh, { recursive: true, force: true });
    throw err;
  }
  for (const name of readdirSync(dir)) {
    const old = join(dir, name);
    if (old !== fresh) rmSync(old, { recursive: true, force: true });
  }
}

/** Where the input roots of an environment root live. */
export function inputsRootDir(root: string): string {
  return `${root}.inputs`;
}
