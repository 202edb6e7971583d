import type { Static } from "@sinclair/typebox";
import type { Publication as PublicationSchema } from "../../protocol/actions/cache-list.js";
import type { EnvironmentCacheConfig } from "../config.js";
import type { RunContext } from "../runners/context.js";
import { runNix } from "../runners/nix-cli.js";
import { NixProgressTracker } from "./progress.js";

/** The shared Nix binary cache of prepared environments: config `environmentCache` as loaded. */
export type BinaryCacheSettings = EnvironmentCacheConfig;

/** What a prepare job says about its push: where, whether it worked, and why not (`paths`: store paths offered). */
export type Publication = Static<typeof PublicationSchema>;

/** How the environment's closure reached this machine's store during one preparation (`restored`: copied back from the binary cache it was pushed to). */
export interface ClosureArrival {
  arrived: "built" | "substituted" | "cached" | "restored";
  built: number;
  substituted: number;
}

/** The Nix options that make every call of prepare consult the shared cache (added to, never replacing, nix.conf). */
export function substituterArgs(cache: BinaryCacheSettings | undefined): string[] {
  if (!cache) return [];
  const args: string[] = [];
  if (cache.substituters.length > 0) args.push("--option", "extra-substituters", cache.substituters.join(" "));
  if (cache.trustedPublicKeys.length > 0) args.push("--option", "extra-trusted-public-keys", cache.trustedPublicKeys.join(" "));
  return args;
}

/** Counts from the evaluation's progress: anything built wins, then anything substituted, else it was all there. */
export function arrivalOf(built: number, substituted: number): ClosureArrival {
  return { arrived: built > 0 ? "built" : substituted > 0 ? "substituted" : "cached", built, substituted };
}

/** The push URL with the signing key as Nix's `secret-key` store parameter (a path: the key stays in its file). */
function pushUrl(cache: BinaryCacheSettings): string {
  const push = cache.push!;
  return cache.secretKeyFile ? `${push}${push.includes("?") ? "&" : "?"}secret-key=${cache.secretKeyFile}` : push;
}

/**
 * Copies `paths` and their closures to the push cache with `nix copy`, as the "publishing" phase
 * of the prepare job (paths and bytes as progress). Never throws for a failed push: the result
 * says `published: false` and why, and the prepared environment stands.
 */
export async function publishClosure(
  ctx: RunContext,
  cache: BinaryCacheSettings,
  paths: readonly string[],
  env: NodeJS.ProcessEnv | undefined,
): Promise<Publication> {
  const base = { to: cache.push!, signed: cache.secretKeyFile !== undefined, paths: paths.length };
  ctx.progress({ phase: "publishing", message: `copying the closure to ${cache.push}` });
  const tracker = new NixProgressTracker((u) => ctx.progress({ ...u, phase: "publishing" }));
  try {
    const res = await runNix(ctx, {
      args: ["copy", "--to", pushUrl(cache), ...substituterArgs(cache), ...paths],
      env,
      onEvent: (e) => tracker.feed(e),
      onPlainLine: (l) => ctx.output("stderr", `${l}\n`),
    });
    tracker.flush();
    if (res.exitCode === 0) {
      ctx.output("stderr", `published ${paths.length} path(s) and their closure to ${cache.push}\n`);
      return { ...base, published: true, at: new Date().toISOString() };
    }
    const reason = res.errorMessage ?? `nix copy exited with code ${res.exitCode}`;
    ctx.output("stderr", `publishing to ${cache.push} failed (the environment is prepared): ${reason}\n`);
    return { ...base, published: false, reason, at: new Date().toISOString() };
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    return { ...base, published: false, reason: `nix copy could not run: ${(err as Error).message}`, at: new Date().toISOString() };
  }
}
