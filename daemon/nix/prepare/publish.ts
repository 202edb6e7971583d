import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { ActionError } from "../../../protocol/errors.js";
import type { RunContext } from "../../runners/context.js";
import { execNix } from "../../runners/nix-cli.js";
import { publishClosure, substituterArgs, type Publication } from "../binary-cache.js";
import type { CacheEntry } from "../cache.js";
import { flakeInputPaths, rootFlakeInputs } from "../flake-inputs.js";
import type { Captured } from "./capture.js";
import type { PrepareParts } from "./types.js";

/** What a preparation publishes: the recipe it came from, under its cache key, and the files it read. */
export interface Publishable {
  recipe: Record<string, unknown>;
  key: string;
  files: CacheEntry["meta"]["files"];
  /** The flake evaluated, whose inputs are rooted with the environment. */
  flakeRef: string;
}

/**
 * Phase "publish": GC roots for the environment and its flake inputs, the push to the shared
 * cache (when configured), then the cache entry; a missing GC root fails it, unrooted inputs only warn.
 */
export async function publishEnvironment(
  parts: PrepareParts,
  workspace: string,
  captured: Captured,
  what: Publishable,
  ctx: RunContext,
): Promise<{ entry: CacheEntry; publication?: Publication }> {
  const { settings } = parts;
  const { storePath } = captured;
  const system = settings.system;
  const root = parts.cache.gcRoot(system, what.key);
  mkdirSync(dirname(root), { recursive: true });
  const cacheArgs = substituterArgs(settings.binaryCache);
  await execNix("nix-store", ["--add-root", root, "--realise", storePath, ...cacheArgs], {
    env: settings.nixEnv,
    signal: ctx.signal,
  }).catch((err: unknown) => {
    if (ctx.signal.aborted) throw err;
    const reason = (err as { stderr?: string }).stderr || (err as Error).message;
    throw new ActionError("unavailable", `the environment was built but its garbage-collector root could not be registered: ${reason}`, {
      cause: err,
    });
  });
  const inputs = await flakeInputPaths(ctx, what.flakeRef, cacheArgs, settings.nixEnv);
  await rootFlakeInputs(ctx, root, inputs, settings.nixEnv).catch((err: unknown) => {
    if (ctx.signal.aborted) throw err;
    ctx.output("stderr", `warning: the flake inputs could not be rooted against garbage collection: ${(err as Error).message}\n`);
  });
  const cache = settings.binaryCache;
  const publication = cache?.push ? await publishClosure(ctx, cache, [storePath, ...inputs], settings.nixEnv) : undefined;
  const entry = parts.cache.publish(
    {
      key: what.key,
      system,
      envStorePath: storePath,
      recipe: what.recipe,
      files: what.files,
      inputs,
      ...(publication ? { publication } : {}),
      ...(settings.nixVersion ? { nixVersion: settings.nixVersion } : {}),
      hookRan: captured.hookRan,
      createdAt: new Date().toISOString(),
    },
    captured.environment,
  );
  parts.profiles.prune(workspace);
  return { entry, ...(publication ? { publication } : {}) };
}
