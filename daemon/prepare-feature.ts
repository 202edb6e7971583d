import { statSync } from "node:fs";
import { join } from "node:path";
import type { Services } from "./actions/context.js";
import { CATALOG_EXTENSION } from "./actions/state-catalog.js";
import { SingleFlight } from "./nix/concurrency.js";
import { pinFromRef } from "./nix/pin.js";
import { NixPreparer } from "./nix/preparer.js";
import { packagesTemplate } from "./nix/template.js";
import { nixSystem, type NixProbe } from "./system.js";

export type NixFeature =
  | { available: true; preparer: NixPreparer; inflight: SingleFlight<string> }
  | { available: false; reason: string; preparer: NixPreparer };

const KEY = "nix.prepare";

/** The prepare feature as installed at start-up. */
export function nixFeature(services: Services): NixFeature {
  const feature = services.extensions.get(KEY) as NixFeature | undefined;
  if (!feature) throw new Error("the prepare feature was not installed (installPrepare)");
  return feature;
}

/**
 * Start-up of prepare: restores the index of prepared workspaces, installs it as the job
 * environment resolver (even without Nix, so jobs keep their environments), registers the catalog.
 */
export function installPrepare(services: Services): void {
  const probe: NixProbe = (services.extensions.get("nix.probe") as NixProbe | undefined) ?? { available: false, reason: "nix was not probed", flakes: false };
  const preparer = new NixPreparer({
    stateDir: services.config.stateDir,
    cacheDir: services.config.cacheDir,
    defaultNixpkgs: services.config.nixpkgs,
    system: nixSystem(),
    daemonVersion: services.build.version,
    binaryCache: services.config.environmentCache,
  });
  warnAboutSigningKey(services);
  const feature: NixFeature = !probe.available
    ? { available: false, reason: probe.reason, preparer }
    : !probe.flakes
      ? { available: false, reason: `Nix ${probe.version} does not support flakes; install Nix 2.4 or newer`, preparer }
      : { available: true, preparer, inflight: new SingleFlight<string>() };
  services.extensions.set(KEY, feature);
  services.env.resolver = preparer.environments;
  services.extensions.set(CATALOG_EXTENSION, async () => catalog(services, preparer));
}

/** A signing key that is missing or readable by others is reported at start (its contents never are). */
function warnAboutSigningKey(services: Services): void {
  const file = services.config.environmentCache.secretKeyFile;
  if (!file) return;
  try {
    const mode = statSync(file).mode;
    if ((mode & 0o077) !== 0) services.log.warn({ secretKeyFile: file, mode: (mode & 0o777).toString(8) }, "the binary cache signing key is readable by other users; chmod 600 it");
  } catch (err) {
    services.log.warn({ secretKeyFile: file, err: (err as Error).message }, "the binary cache signing key cannot be read; pushes will fail (published: false)");
  }
}

/** Where the workspace's environment was pushed when it was prepared (config environmentCache.push). */
function publicationOf(preparer: NixPreparer, system: string, key: string) {
  const publication = preparer.cache.read(system, key)?.meta.publication;
  return publication ? { publication } : {};
}

function catalog(services: Services, preparer: NixPreparer) {
  const url = services.config.nixpkgs;
  const workspaces = preparer.environments.list();
  // The default's narHash/lastModified are known once some workspace locked it.
  const locked = workspaces.find((w) => w.nixpkgs?.url === url && w.nixpkgs.narHash)?.nixpkgs;
  const nixpkgs = { ...pinFromRef(url), ...(locked ? { narHash: locked.narHash, lastModified: locked.lastModified, ...(locked.rev ? { rev: locked.rev } : {}) } : {}) };
  const template = packagesTemplate();
  return {
    system: nixSystem(),
    nixpkgs,
    inputs: template.inputs.map((name) => ({ name, url: name === "nixpkgs" ? url : undefined, template: "packages", templateVersion: template.version })),
    workspaces: workspaces.map((w) => ({
      ...publicationOf(preparer, w.system, w.cacheKey),
      workspace: w.workspace,
      system: w.system,
      ...(w.packages ? { packages: w.packages } : { flake: w.flake }),
      nixpkgs: w.nixpkgs,
      cacheKey: w.cacheKey,
      preparedAt: w.preparedAt,
      cacheDir: join(w.entryDir),
    })),
  };
}
