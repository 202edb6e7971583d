import type { Static } from "@sinclair/typebox";
import type {
  EnvironmentSummary as EnvironmentSummarySchema,
  Restoration as RestorationSchema,
} from "../../../protocol/actions/prepare.js";
import type { BinaryCacheSettings, ClosureArrival, Publication } from "../binary-cache.js";
import type { EnvironmentCache } from "../cache.js";
import type { WorkspaceProfiles } from "../profile.js";
import type { WorkspaceEnvironments } from "../resolver.js";

/** What a restore did: the binary cache the store paths came back from, and how many were copied. */
export type Restoration = Static<typeof RestorationSchema>;

export interface NixSettings {
  stateDir: string;
  cacheDir: string;
  /** The default nixpkgs flake ref for new package definitions (`--nixpkgs` / HOTLINE_NIXPKGS). */
  defaultNixpkgs: string;
  system: string;
  daemonVersion: string;
  /** Nix's version as the start-up probe found it (`nix --version` is asked there only), recorded in each cache entry. */
  nixVersion?: string;
  /** Environment for Nix processes (e.g. NIX_CONFIG with extra substituters); defaults to the daemon's. */
  nixEnv?: NodeJS.ProcessEnv;
  /** The shared binary cache: consulted by every Nix call of prepare, pushed to after each preparation. */
  binaryCache?: BinaryCacheSettings;
  hookTimeoutMs?: number;
}

/** What a client learns about a prepared environment (the `environment` of a ready reply and a job result). */
export type EnvironmentSummary = Static<typeof EnvironmentSummarySchema>;

/** What one preparation job produced: the environment, how its closure arrived, and its push (when configured). */
export interface PrepareOutcome {
  environment: EnvironmentSummary;
  closure: ClosureArrival;
  publication?: Publication;
  /** Set when the store paths were copied back from the binary cache instead of built. */
  restored?: Restoration;
}

/** The long-lived parts every phase of a preparation works with (NixPreparer's own). */
export interface PrepareParts {
  readonly settings: NixSettings;
  readonly cache: EnvironmentCache;
  readonly environments: WorkspaceEnvironments;
  readonly profiles: WorkspaceProfiles;
}
