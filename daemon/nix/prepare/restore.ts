import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { RunContext } from "../../runners/context.js";
import { execNix, runNix } from "../../runners/nix-cli.js";
import type { CacheEntry } from "../cache.js";
import { rootFlakeInputs } from "../flake-inputs.js";
import type { PrepareParts, Restoration } from "./types.js";

const FRESH_LOOKUPS = ["--option", "narinfo-cache-negative-ttl", "0", "--option", "narinfo-cache-positive-ttl", "0"];

/** Nix's internal-json activity type of copying one store path. */
const COPY_PATH = 100;

/** Where an entry's closure can be restored from: the binary cache its preparation was pushed to, when that push worked. */
export function restoreSource(entry: CacheEntry): string | undefined {
  const publication = entry.meta.publication;
  return publication?.published ? publication.to : undefined;
}

/**
 * Phase "restore": an environment the cache records but whose store paths are gone (a new container
 * on a kept home has the image's fresh /nix) is copied back from the binary cache it was published
 * to — the environment's closure and its flake inputs, with `nix copy` — and rooted again; nothing
 * is evaluated or built. From a `file://` directory (the daemon's own push target, e.g. in the
 * home) signatures are not checked; from any other store they must be signed by one of the
 * configured `trustedPublicKeys`, as a substitute would be. Throws when the cache lacks them or Nix fails.
 */
export async function restoreEnvironment(
  parts: PrepareParts,
  entry: CacheEntry,
  ctx: Pick<RunContext, "signal">,
  onLine?: (line: string) => void,
): Promise<Restoration> {
  const from = restoreSource(entry);
  if (!from) throw new Error("the environment was never published to a binary cache");
  const { settings } = parts;
  const { meta } = entry;
  const inputs = meta.inputs ?? [];
  const keys = settings.binaryCache?.trustedPublicKeys ?? [];
  const trust = from.startsWith("file://")
    ? ["--no-check-sigs"]
    : keys.length > 0
      ? ["--option", "extra-trusted-public-keys", keys.join(" ")]
      : [];
  let copied = 0;
  const res = await runNix(ctx, {
    // Lookups Nix remembers from before (a miss before the closure was pushed) must not decide a restore.
    args: ["copy", ...trust, ...FRESH_LOOKUPS, "--from", from, meta.envStorePath, ...inputs],
    env: settings.nixEnv,
    onEvent: (e) => {
      if (e.action === "start" && e.type === COPY_PATH) copied++;
    },
    onPlainLine: onLine,
  });
  if (res.exitCode !== 0) throw new Error(res.errorMessage ?? `nix copy exited with code ${res.exitCode}`);
  // The roots in the cache directory survived with the home, but the store that registered them did not.
  const root = parts.cache.gcRoot(meta.system, meta.key);
  mkdirSync(dirname(root), { recursive: true });
  await execNix("nix-store", ["--add-root", root, "--realise", meta.envStorePath], { env: settings.nixEnv, signal: ctx.signal });
  await rootFlakeInputs(ctx, root, inputs, settings.nixEnv);
  return { from, paths: copied };
}
