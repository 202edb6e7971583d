import { statSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "pino";
import type { stateCatalog } from "../../protocol/actions/state-catalog.js";
import type { ResultOf } from "../../protocol/define.js";
import type { BuildInfo } from "../build-info.js";
import type { Config } from "../config.js";
import { SingleFlight } from "../nix/concurrency.js";
import { pinFromRef } from "../nix/pin.js";
import { NixPreparer } from "../nix/preparer.js";
import { REGISTRY_FILE, writeNixpkgsRegistry } from "../nix/registry.js";
import { packagesTemplate } from "../nix/template.js";
import { nixSystem, type NixProbe } from "../system.js";

export type Catalog = ResultOf<typeof stateCatalog>;

/** Whether prepare can run here: with Nix and flakes, or not, and why. */
type Availability = { available: true; inflight: SingleFlight<string> } | { available: false; reason: string };

/**
 * The prepare feature as wired in main.ts. The preparer exists even without Nix: its index is
 * the job environment resolver, so jobs keep the environments prepared earlier.
 */
export type PrepareFeature = Availability & { preparer: NixPreparer; catalog(): Catalog; registry: NixpkgsRegistry };

/** The registry jobs resolve `nixpkgs` through (see nix/registry.ts); rewritten once a prepare has locked the pin. */
export interface NixpkgsRegistry {
  file: string;
  /** Writes the file for the default pin (with its narHash once known); false when it could not be written. */
  refresh(): Promise<boolean>;
}

export interface PrepareFeatureOptions {
  config: Readonly<Config>;
  build: BuildInfo;
  log: Logger;
  probe: NixProbe;
}

/** Start-up of prepare: restores the index of prepared workspaces and says whether Nix can prepare more. */
export function createPrepare({ config, build, log, probe }: PrepareFeatureOptions): PrepareFeature {
  const preparer = new NixPreparer({
    stateDir: config.stateDir,
    cacheDir: config.cacheDir,
    defaultNixpkgs: config.nixpkgs,
    system: nixSystem(),
    daemonVersion: build.version,
    ...(probe.available ? { nixVersion: probe.version } : {}),
    binaryCache: config.environmentCache,
  });
  warnAboutSigningKey(config, log);
  const registry: NixpkgsRegistry = {
    file: join(config.stateDir, REGISTRY_FILE),
    refresh: () =>
      writeNixpkgsRegistry(registry.file, config.nixpkgs, catalog(config, preparer).nixpkgs).then(
        () => true,
        (err: unknown) => {
          log.warn({ err: (err as Error).message, file: registry.file }, "the nixpkgs flake registry for jobs cannot be written");
          return false;
        },
      ),
  };
  const common = { preparer, catalog: () => catalog(config, preparer), registry };
  if (!probe.available) return { available: false, reason: probe.reason, ...common };
  if (!probe.flakes)
    return { available: false, reason: `Nix ${probe.version} does not support flakes; install Nix 2.4 or newer`, ...common };
  return { available: true, inflight: new SingleFlight<string>(), ...common };
}

/** A signing key that is missing or readable by others is reported at start (its contents never are). */
function warnAboutSigningKey(config: Readonly<Config>, log: Logger): void {
  const file = config.environmentCache.secretKeyFile;
  if (!file) return;
  try {
    const mode = statSync(file).mode;
    if ((mode & 0o077) !== 0)
      log.warn(
        { secretKeyFile: file, mode: (mode & 0o777).toString(8) },
        "the binary cache signing key is readable by other users; chmod 600 it",
      );
  } catch (err) {
    log.warn(
      { secretKeyFile: file, err: (err as Error).message },
      "the binary cache signing key cannot be read; pushes will fail (published: false)",
    );
  }
}

/** Where the workspace's environment was pushed when it was prepared (config environmentCache.push). */
function publicationOf(preparer: NixPreparer, system: string, key: string) {
  const publication = preparer.cache.readMeta(system, key)?.meta.publication;
  return publication ? { publication } : {};
}

/** The state.catalog answer: the configured pin (locked once some workspace locked it) and every prepared workspace. */
function catalog(config: Readonly<Config>, preparer: NixPreparer): Catalog {
  const url = config.nixpkgs;
  const workspaces = preparer.environments.list();
  // The default's narHash/lastModified are known once some workspace locked it.
  const locked = workspaces.find((w) => w.nixpkgs?.url === url && w.nixpkgs.narHash)?.nixpkgs;
  const nixpkgs = {
    ...pinFromRef(url),
    ...(locked ? { narHash: locked.narHash, lastModified: locked.lastModified, ...(locked.rev ? { rev: locked.rev } : {}) } : {}),
  };
  const template = packagesTemplate();
  return {
    system: nixSystem(),
    nixpkgs,
    inputs: template.inputs.map((name) => ({
      name,
      url: name === "nixpkgs" ? url : undefined,
      template: "packages",
      templateVersion: template.version,
    })),
    workspaces: workspaces.map((w) => ({
      ...publicationOf(preparer, w.system, w.cacheKey),
      workspace: w.workspace,
      system: w.system,
      ...(w.packages ? { packages: w.packages } : { flake: w.flake }),
      nixpkgs: w.nixpkgs,
      cacheKey: w.cacheKey,
      preparedAt: w.preparedAt,
      cacheDir: w.entryDir,
    })),
  };
}
