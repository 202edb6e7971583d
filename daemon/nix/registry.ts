import { execFile } from "node:child_process";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { nixArgs } from "../runners/nix-cli.js";
import type { NixpkgsPin } from "./pin.js";
import { startChild } from "../watchdog/child-wait.js";

/**
 * The flake registry jobs resolve `nixpkgs` through: one entry, `nixpkgs` → the daemon's default
 * pin, so `nix shell nixpkgs#jq` in a job uses the nixpkgs `prepare` fetched (offline too) instead
 * of the moving revision of Nix's global registry. Jobs get it as their global registry
 * (`NIX_CONFIG` `flake-registry = …`); a user or system registry entry for `nixpkgs` still comes
 * first, as Nix orders registries (the image's /etc/nix/registry.json names the same pin).
 */

/** The file in the daemon's state directory. */
export const REGISTRY_FILE = "nix-registry.json";

/** The registry `to` attributes of a flake ref, for the forms written here directly (github and path); else undefined. */
export function registryTarget(ref: string, locked?: Omit<NixpkgsPin, "url">): Record<string, unknown> | undefined {
  const github = /^github:([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+)(?:\/([^?#]+))?$/.exec(ref);
  if (github) {
    const [, owner, repo, refOrRev] = github;
    const to: Record<string, unknown> = { type: "github", owner, repo };
    if (refOrRev && /^[0-9a-f]{40}$/.test(refOrRev)) to.rev = refOrRev;
    else if (refOrRev) to.ref = refOrRev;
    // A github rev never changes content: with its narHash Nix uses the store copy without the network.
    if (to.rev && locked?.rev === to.rev && locked.narHash) to.narHash = locked.narHash;
    return to;
  }
  const path = /^(?:path:)?(\/[^?#]*)$/.exec(ref);
  if (path) return { type: "path", path: path[1] };
  return undefined;
}

/** The registry file's text for `to`. */
export function registryJson(to: Record<string, unknown>): string {
  const entry = { from: { id: "nixpkgs", type: "indirect" }, to };
  return `${JSON.stringify({ flakes: [entry], version: 2 }, null, 2)}\n`;
}

/**
 * Writes the registry for `ref` (temp file, then rename). Refs of other forms are converted by
 * `nix registry add --registry`, which parses without fetching.
 */
export async function writeNixpkgsRegistry(
  file: string,
  ref: string,
  locked?: Omit<NixpkgsPin, "url">,
  env?: NodeJS.ProcessEnv,
): Promise<void> {
  const temp = `${file}.${process.pid}.tmp`;
  const to = registryTarget(ref, locked);
  if (to) {
    const text = registryJson(to);
    if (readText(file) === text) return;
    writeFileSync(temp, text, { mode: 0o644 });
  } else {
    await new Promise<void>((resolve, reject) =>
      startChild(() =>
        execFile("nix", nixArgs(["registry", "add", "--registry", temp, "nixpkgs", ref]), { env, timeout: 30_000 }, (err) =>
          err ? reject(err) : resolve(),
        ),
      ),
    );
  }
  renameSync(temp, file);
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

/** `env` with the registry as Nix's global registry, added to any `NIX_CONFIG` it already has. */
export function withNixpkgsRegistry(env: Record<string, string>, file: string): Record<string, string> {
  const line = `flake-registry = ${file}`;
  return { ...env, NIX_CONFIG: env.NIX_CONFIG ? `${env.NIX_CONFIG}\n${line}` : line };
}
