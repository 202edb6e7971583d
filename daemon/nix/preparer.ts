import { existsSync } from "node:fs";
import { ActionError } from "../../protocol/errors.js";
import { KeyedMutex } from "../util/mutex.js";
import type { RunContext } from "../runners/context.js";
import { arrivalOf } from "./binary-cache.js";
import { cacheKey, EnvironmentCache, type CacheEntry } from "./cache.js";
import { fingerprintsMatch } from "./fingerprint.js";
import { WorkspaceProfiles } from "./profile.js";
import { packagesRecipe, planRecipe, type PrepareRequest, type Recipe } from "./recipe.js";
import { WorkspaceEnvironments } from "./resolver.js";
import { readSpec, workspacePaths, type EnvironmentSpec } from "./spec.js";
import { prepareFlake } from "./prepare/flake.js";
import { preparePackages } from "./prepare/packages.js";
import { recordEnvironment, summaryOf } from "./prepare/record.js";
import { restoreEnvironment, restoreSource } from "./prepare/restore.js";
import type { EnvironmentSummary, NixSettings, PrepareOutcome, PrepareParts, Restoration } from "./prepare/types.js";

export type { EnvironmentSummary, NixSettings, PrepareOutcome } from "./prepare/types.js";

/**
 * The answer before any Nix process: ready from the cache, or a recipe a job must prepare —
 * `restorable` when the cache records it but the store lost its paths and a binary cache has them.
 */
export type PreparePlan =
  | { ready: true; workspace: string; environment: EnvironmentSummary }
  | { ready: false; workspace: string; recipe: Recipe; restorable?: CacheEntry };

/** A restore that brought the workspace's environment back (`restored`), or why it could not (a build follows). */
export type RestoreOutcome =
  | { ready: true; workspace: string; environment: EnvironmentSummary; restored?: Restoration }
  | { ready: false; reason: string };

/**
 * Prepares workspace environments: plans against the cache without Nix (resolve the recipe), and
 * in a job, serialized per workspace, runs the phases in ./prepare/: write the flake, evaluate and
 * build (evaluate.ts), capture the environment (capture.ts), publish (publish.ts), record (record.ts);
 * packages.ts and flake.ts put them in order for each kind of recipe.
 */
export class NixPreparer implements PrepareParts {
  readonly cache: EnvironmentCache;
  readonly environments: WorkspaceEnvironments;
  private readonly mutex = new KeyedMutex();
  readonly profiles: WorkspaceProfiles;

  constructor(readonly settings: NixSettings) {
    this.cache = new EnvironmentCache(settings.cacheDir);
    this.environments = new WorkspaceEnvironments(settings.stateDir);
    this.profiles = new WorkspaceProfiles(settings.cacheDir, settings.system);
  }

  /** Answers from the cache when it can (a few stats, no Nix process); otherwise says what a job must do. */
  plan(req: PrepareRequest, workspace: string, opts: { adopt?: boolean } = {}): PreparePlan {
    const { recipe, spec } = planRecipe(req, workspace, this.settings.defaultNixpkgs);
    // While a prepare of this workspace runs, its files are the job's: answer through a job.
    const hit = opts.adopt === false ? undefined : this.cachedEntry(workspace, recipe, spec);
    if (!hit) return { ready: false, workspace, recipe };
    if (!hit.valid) return { ready: false, workspace, recipe, ...(restoreSource(hit.entry) ? { restorable: hit.entry } : {}) };
    return { ready: true, workspace, environment: recordEnvironment(this, workspace, recipe, hit.entry, spec) };
  }

  /** The entry the workspace's definitions name, and whether its store path is still there. */
  private cachedEntry(
    workspace: string,
    recipe: Recipe,
    spec: EnvironmentSpec | undefined,
  ): { entry: CacheEntry; valid: boolean } | undefined {
    const system = this.settings.system;
    if (recipe.kind === "packages") {
      if (!recipe.pin.narHash) return undefined;
      const found = this.cache.find(system, cacheKey(packagesRecipe(recipe.packages, recipe.pin), system));
      const paths = workspacePaths(workspace);
      // The generated files must exist (same pin, so the lock stays valid) before a hit can be adopted.
      return found && existsSync(paths.lock) && spec?.packages !== undefined ? found : undefined;
    }
    if (spec?.flake !== recipe.ref || !spec.cacheKey) return undefined;
    const found = this.cache.find(system, spec.cacheKey);
    return found?.entry.meta.files && fingerprintsMatch(found.entry.meta.files) ? found : undefined;
  }

  /**
   * Brings back a `restorable` plan's store paths from the binary cache, serialized with the
   * workspace's prepares (one that finished meanwhile may have made it ready: then nothing is copied),
   * and answers ready; or says why not, and a prepare job builds it from the definitions.
   */
  restore(req: PrepareRequest, workspace: string, signal: AbortSignal): Promise<RestoreOutcome> {
    return this.mutex.run(workspace, async () => {
      const plan = this.plan(req, workspace);
      if (plan.ready) return plan;
      if (!plan.restorable) return { ready: false, reason: "the binary cache does not record it" };
      return this.restorePlan(workspace, plan.recipe, plan.restorable, { signal });
    });
  }

  private async restorePlan(
    workspace: string,
    recipe: Recipe,
    entry: CacheEntry,
    ctx: Pick<RunContext, "signal">,
    onLine?: (line: string) => void,
  ): Promise<RestoreOutcome> {
    try {
      const restored = await restoreEnvironment(this, entry, ctx, onLine);
      const found = this.cache.find(entry.meta.system, entry.meta.key);
      if (!found?.valid) return { ready: false, reason: `${entry.meta.envStorePath} is still missing after the copy` };
      // Not a new preparation: the workspace's spec keeps its createdAt.
      const environment = recordEnvironment(this, workspace, recipe, found.entry, readSpec(workspace));
      return { ready: true, workspace, environment, restored };
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      return { ready: false, reason: (err as { stderr?: string }).stderr || (err as Error).message };
    }
  }

  /** Whether any prepare is running or waiting (pruning waits for none: it refuses). */
  anyBusy(): boolean {
    return this.mutex.size > 0;
  }

  /** Whether a prepare of this workspace is running or waiting. */
  busy(workspace: string): boolean {
    return this.mutex.busy(workspace);
  }

  /** The current summary for a workspace, if it was prepared (for failure reports and `hotline env`). */
  current(workspace: string): EnvironmentSummary | undefined {
    const rec = this.environments.get(workspace);
    const entry = rec && this.cache.lookup(rec.info.system, rec.info.cacheKey);
    if (!rec || !entry) return undefined;
    const spec = {
      version: 1 as const,
      system: rec.info.system,
      cacheKey: rec.info.cacheKey,
      packages: rec.info.packages,
      flake: rec.info.flake,
      nixpkgs: rec.info.nixpkgs,
      createdAt: "",
      updatedAt: "",
      daemonVersion: "",
    };
    return summaryOf(workspace, spec, entry, rec.info.preparedAt);
  }

  /**
   * The job body. Serialized per workspace; re-plans under the lock (an earlier prepare may have
   * made it ready). On failure nothing of the previous environment changes, and the error says so.
   */
  run(req: PrepareRequest, workspace: string, ctx: RunContext, opts: { restoreFailed?: string } = {}): Promise<PrepareOutcome> {
    if (this.mutex.busy(workspace)) ctx.output("stderr", "waiting for another prepare of this workspace to finish\n");
    return this.mutex.run(workspace, async () => {
      const plan = this.plan(req, workspace);
      if (plan.ready) {
        ctx.output("stderr", "environment already prepared; nothing to do\n");
        return { environment: plan.environment, closure: arrivalOf(0, 0) };
      }
      if (plan.restorable && opts.restoreFailed === undefined) {
        // Asked while another prepare ran (the request could not restore it itself): restore here.
        ctx.progress({ phase: "restoring", message: `copying the environment back from ${restoreSource(plan.restorable)}` });
        const out = await this.restorePlan(workspace, plan.recipe, plan.restorable, ctx, (l) => ctx.output("stderr", `${l}\n`));
        if (out.ready) {
          ctx.output("stderr", `restored ${out.restored?.paths ?? 0} store path(s) from ${out.restored?.from}; nothing built\n`);
          return {
            environment: out.environment,
            closure: { arrived: "restored", built: 0, substituted: 0 },
            ...(out.restored ? { restored: out.restored } : {}),
          };
        }
        opts = { restoreFailed: out.reason };
      }
      if (opts.restoreFailed !== undefined)
        ctx.output(
          "stderr",
          `the store lost this environment and restoring it from the binary cache failed (${opts.restoreFailed}); preparing it again\n`,
        );
      try {
        return plan.recipe.kind === "packages"
          ? await preparePackages(this, workspace, plan.recipe, ctx)
          : await prepareFlake(this, workspace, plan.recipe, ctx);
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        throw this.withFallback(workspace, err);
      }
    });
  }

  private withFallback(workspace: string, err: unknown): ActionError {
    const previous = this.current(workspace);
    const base =
      err instanceof ActionError ? err : new ActionError("internal", `preparation failed: ${(err as Error).message}`, { cause: err });
    const tail = previous ? "; the previous environment stays in use" : "";
    return new ActionError(base.code, `${base.message}${tail}`, {
      path: base.path,
      details: { ...base.details, fallback: previous !== undefined, ...(previous ? { environment: previous } : {}) },
      cause: err,
    });
  }
}
