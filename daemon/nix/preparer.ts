import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import type { Static } from "@sinclair/typebox";
import type { EnvironmentSummary as EnvironmentSummarySchema } from "../../protocol/actions/prepare.js";
import { ActionError } from "../../protocol/errors.js";
import { KeyedMutex } from "../util/mutex.js";
import type { RunContext } from "../runners/context.js";
import { execNix, runNix, stripAnsi, type NixLogEvent } from "../runners/nix-cli.js";
import {
  arrivalOf,
  publishClosure,
  substituterArgs,
  type BinaryCacheSettings,
  type ClosureArrival,
  type Publication,
} from "./binary-cache.js";
import { cacheKey, EnvironmentCache, type CacheEntry } from "./cache.js";
import { flakeInputPaths, rootFlakeInputs } from "./flake-inputs.js";
import { environmentFromDevEnv, envStorePath, shellHookOf, type DevEnvJson } from "./dev-env.js";
import { fingerprintFiles, fingerprintsMatch } from "./fingerprint.js";
import { readWorkspaceFile, writeFileIfChanged } from "./files.js";
import { runShellHook } from "./hooks.js";
import { readLockedInput } from "./pin.js";
import { evaluatedWorkspaceFiles } from "./evaluated-files.js";
import { lockBelongsTo, restoreLock } from "./flake-lock.js";
import { BuildFailures } from "./build-failures.js";
import { nixFailure } from "./nix-failure.js";
import { WorkspaceProfiles } from "./profile.js";
import { NixProgressTracker } from "./progress.js";
import { packagesRecipe, parseFlakeRef, planRecipe, type PrepareRequest, type Recipe } from "./recipe.js";
import { WorkspaceEnvironments } from "./resolver.js";
import { writeSpec, workspacePaths, type EnvironmentSpec } from "./spec.js";
import { renderPackagesFlake, packagesTemplate } from "./template.js";

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
}

/** The answer before any Nix process: ready from the cache, or a recipe a job must prepare. */
export type PreparePlan =
  | { ready: true; workspace: string; environment: EnvironmentSummary }
  | { ready: false; workspace: string; recipe: Recipe };

/**
 * Prepares workspace environments: plans against the cache without Nix, evaluates with
 * `nix print-dev-env` in a job, runs hooks once, publishes the cache entry and records the workspace.
 */
export class NixPreparer {
  readonly cache: EnvironmentCache;
  readonly environments: WorkspaceEnvironments;
  private readonly mutex = new KeyedMutex();
  private readonly profiles: WorkspaceProfiles;

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
    return { ready: true, workspace, environment: this.adopt(workspace, recipe, hit, spec) };
  }

  private cachedEntry(workspace: string, recipe: Recipe, spec: EnvironmentSpec | undefined): CacheEntry | undefined {
    const system = this.settings.system;
    if (recipe.kind === "packages") {
      if (!recipe.pin.narHash) return undefined;
      const entry = this.cache.lookup(system, cacheKey(packagesRecipe(recipe.packages, recipe.pin), system));
      const paths = workspacePaths(workspace);
      // The generated files must exist (same pin, so the lock stays valid) before a hit can be adopted.
      return entry && existsSync(paths.lock) && spec?.packages !== undefined ? entry : undefined;
    }
    if (spec?.flake !== recipe.ref || !spec.cacheKey) return undefined;
    const entry = this.cache.lookup(system, spec.cacheKey);
    return entry?.meta.files && fingerprintsMatch(entry.meta.files) ? entry : undefined;
  }

  /** Makes a cache entry the workspace's environment: generated files, spec, index. */
  private adopt(workspace: string, recipe: Recipe, entry: CacheEntry, previous: EnvironmentSpec | undefined): EnvironmentSummary {
    const now = new Date().toISOString();
    const paths = workspacePaths(workspace);
    if (recipe.kind === "packages") writeFileIfChanged(paths.flake, renderPackagesFlake(recipe.pin.url, recipe.packages));
    const spec: EnvironmentSpec = {
      version: 1,
      ...(recipe.kind === "packages" ? { packages: recipe.packages } : { flake: recipe.ref }),
      nixpkgs: recipe.kind === "packages" ? recipe.pin : (entry.meta.recipe.nixpkgs as EnvironmentSpec["nixpkgs"]),
      system: this.settings.system,
      cacheKey: entry.meta.key,
      ...(recipe.kind === "packages" ? { templateVersion: packagesTemplate().version } : {}),
      createdAt: previous?.createdAt ?? now,
      updatedAt: now,
      daemonVersion: this.settings.daemonVersion,
    };
    if (!previous || JSON.stringify({ ...previous, updatedAt: "" }) !== JSON.stringify({ ...spec, updatedAt: "" }))
      writeSpec(workspace, spec);
    const info = {
      workspace,
      system: spec.system,
      cacheKey: spec.cacheKey,
      entryDir: entry.dir,
      packages: spec.packages,
      flake: spec.flake,
      nixpkgs: spec.nixpkgs,
      preparedAt: now,
    };
    const current = this.environments.get(workspace);
    if (!current || current.info.cacheKey !== info.cacheKey || current.info.entryDir !== info.entryDir)
      this.environments.record(info, entry.environment);
    this.cache.touch(entry);
    return this.summary(workspace, spec, entry, current?.info.preparedAt ?? now);
  }

  private summary(workspace: string, spec: EnvironmentSpec, entry: CacheEntry, preparedAt: string): EnvironmentSummary {
    return {
      workspace,
      system: spec.system,
      cacheKey: entry.meta.key,
      storePath: entry.meta.envStorePath,
      ...(spec.packages ? { packages: spec.packages } : { flake: spec.flake }),
      nixpkgs: spec.nixpkgs,
      variables: Object.keys(entry.environment.set).sort(),
      pathPrepend: entry.environment.prepend.PATH ?? [],
      hookRan: entry.meta.hookRan,
      preparedAt,
    };
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
    return this.summary(workspace, spec, entry, rec.info.preparedAt);
  }

  /**
   * The job body. Serialized per workspace; re-plans under the lock (an earlier prepare may have
   * made it ready). On failure nothing of the previous environment changes, and the error says so.
   */
  run(req: PrepareRequest, workspace: string, ctx: RunContext): Promise<PrepareOutcome> {
    if (this.mutex.busy(workspace)) ctx.output("stderr", "waiting for another prepare of this workspace to finish\n");
    return this.mutex.run(workspace, async () => {
      const plan = this.plan(req, workspace);
      if (plan.ready) {
        ctx.output("stderr", "environment already prepared; nothing to do\n");
        return { environment: plan.environment, closure: arrivalOf(0, 0) };
      }
      try {
        return plan.recipe.kind === "packages"
          ? await this.preparePackages(workspace, plan.recipe, ctx)
          : await this.prepareFlake(workspace, plan.recipe, ctx);
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

  private async preparePackages(
    workspace: string,
    recipe: Extract<Recipe, { kind: "packages" }>,
    ctx: RunContext,
  ): Promise<PrepareOutcome> {
    const paths = workspacePaths(workspace);
    mkdirSync(paths.hotline, { recursive: true });
    // Evaluate a staged copy: the workspace's flake and lock change only after success.
    const staging = mkdtempSync(join(paths.hotline, ".staging-"));
    try {
      writeFileIfChanged(join(staging, "flake.nix"), renderPackagesFlake(recipe.pin.url, recipe.packages));
      // Copied through a read that refuses a FIFO (copyFileSync's open would block the daemon on one).
      const reusedLock = lockBelongsTo(paths.lock, recipe.pin.url) ? readWorkspaceFile(paths.lock) : undefined;
      const lockReusable = reusedLock !== undefined;
      if (reusedLock) writeFileIfChanged(join(staging, "flake.lock"), reusedLock);
      let pin = recipe.pin;
      if (lockReusable) pin = { ...pin, ...readLockedInput(paths.lock) };
      let entry = pin.narHash
        ? this.cache.lookup(this.settings.system, cacheKey(packagesRecipe(recipe.packages, pin), this.settings.system))
        : undefined;
      let closure = arrivalOf(0, 0);
      let publication: Publication | undefined;
      if (entry) {
        ctx.output("stderr", `using cached environment ${entry.meta.key}\n`);
      } else {
        const flakeRef = `path:${staging}`;
        const args = [
          "print-dev-env",
          "--json",
          ...this.profiles.args(workspace),
          ...(lockReusable ? ["--no-update-lock-file"] : []),
          flakeRef,
        ];
        const { json, progress } = await this.evaluate(args, workspace, ctx, recipe.packages);
        closure = arrivalOf(progress.builds.done, progress.substitutions.done);
        pin = { ...recipe.pin, ...readLockedInput(join(staging, "flake.lock")) };
        const recipeData = packagesRecipe(recipe.packages, pin);
        ({ entry, publication } = await this.finish(
          workspace,
          json,
          recipeData,
          cacheKey(recipeData, this.settings.system),
          undefined,
          flakeRef,
          ctx,
        ));
      }
      writeFileIfChanged(paths.flake, readFileSync(join(staging, "flake.nix"), "utf8"));
      writeFileIfChanged(paths.lock, readFileSync(join(staging, "flake.lock"), "utf8"));
      return { environment: this.adopt(workspace, { ...recipe, pin }, entry, undefined), closure, ...(publication ? { publication } : {}) };
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }

  private async prepareFlake(workspace: string, recipe: Extract<Recipe, { kind: "flake" }>, ctx: RunContext): Promise<PrepareOutcome> {
    const { dir, attr } = parseFlakeRef(workspace, recipe.ref);
    const lockPath = join(dir, "flake.lock");
    const lockBefore = readWorkspaceFile(lockPath) ?? null;
    const generated = dir === workspacePaths(workspace).flakeDir || dir.startsWith(workspacePaths(workspace).hotline + sep);
    const flakeRef = `${generated ? "path:" : ""}${dir}`;
    const installable = `${flakeRef}${attr ? `#${attr}` : ""}`;
    const before = fingerprintFiles([join(dir, "flake.nix"), lockPath]);
    const args = [
      "print-dev-env",
      "--json",
      "-v",
      ...this.profiles.args(workspace),
      ...(lockBefore && !recipe.updateLock ? ["--no-update-lock-file"] : []),
      installable,
    ];
    let result: Awaited<ReturnType<NixPreparer["evaluate"]>>;
    try {
      result = await this.evaluate(args, workspace, ctx, undefined);
    } catch (err) {
      restoreLock(lockPath, lockBefore);
      if (err instanceof ActionError && /requires lock file changes/.test(err.message)) {
        throw new ActionError(
          "conflict",
          `flake.lock of ${recipe.ref} is out of date and is never updated silently; pass updateLock: true to let Nix update it`,
          {
            path: "/updateLock",
            details: { nix: err.message },
          },
        );
      }
      throw err;
    }
    const files = evaluatedWorkspaceFiles(result.evaluated, dir, workspace);
    const prints = fingerprintFiles([join(dir, "flake.nix"), lockPath, ...files]);
    // An edit made while Nix evaluated must not be trusted as what the environment came from.
    for (const b of before) {
      const now = prints.find((p) => p.path === b.path);
      if (now && now.sha256 !== b.sha256 && !(b.path === lockPath && recipe.updateLock) && !(b.path === lockPath && !lockBefore))
        now.mtimeNs = "-1";
    }
    const locked = readLockedInput(lockPath);
    const recipeData = {
      kind: "flake",
      ref: recipe.ref,
      files: prints.map((p) => ({ path: relative(workspace, p.path), sha256: p.sha256 })),
      ...(locked ? { nixpkgs: { url: "", ...locked } } : {}),
    };
    const key = cacheKey(recipeData, this.settings.system);
    const { entry, publication } = await this.finish(workspace, result.json, recipeData, key, prints, flakeRef, ctx);
    const closure = arrivalOf(result.progress.builds.done, result.progress.substitutions.done);
    return { environment: this.adopt(workspace, recipe, entry, undefined), closure, ...(publication ? { publication } : {}) };
  }

  /** Runs print-dev-env, streaming Nix's log to the job and its activities to progress. */
  private async evaluate(args: string[], workspace: string, ctx: RunContext, packages: readonly string[] | undefined) {
    const tracker = new NixProgressTracker((u) => ctx.progress(u));
    const failures = new BuildFailures();
    const evaluated: string[] = [];
    ctx.progress({ phase: "evaluating", message: "evaluating the flake" });
    const onEvent = (e: NixLogEvent) => {
      tracker.feed(e);
      failures.feed(e);
      if (e.action === "msg") {
        const file = e.level === 4 ? /^evaluating file '(.+)'$/.exec(e.msg)?.[1] : undefined;
        if (file) evaluated.push(file);
        else if (e.level <= 3) ctx.output("stderr", `${stripAnsi(e.msg)}\n`);
      } else if (e.action === "start" && e.level <= 3 && e.text) {
        ctx.output("stderr", `${stripAnsi(e.text)}...\n`);
      } else if (e.action === "result" && e.type === 101 && e.fields?.[0] !== undefined) {
        ctx.output("stderr", `${String(e.fields[0])}\n`);
      }
    };
    const res = await runNix(ctx, {
      args: [args[0]!, ...substituterArgs(this.settings.binaryCache), ...args.slice(1)],
      cwd: workspace,
      env: this.settings.nixEnv,
      onEvent,
      onPlainLine: (l) => ctx.output("stderr", `${l}\n`),
    }).catch((err: unknown) => {
      if (ctx.signal.aborted) throw err;
      throw new ActionError("unavailable", `nix could not be started: ${(err as Error).message}`, { cause: err });
    });
    tracker.flush();
    if (res.exitCode !== 0) throw nixFailure(res.exitCode, res.errorMessage, packages, failures.list());
    let json: DevEnvJson;
    try {
      json = JSON.parse(res.stdout) as DevEnvJson;
    } catch {
      throw new ActionError("internal", "nix print-dev-env printed something that is not JSON");
    }
    return { json, evaluated, progress: tracker.snapshot() };
  }

  /** Hooks, GC roots (environment and flake inputs), the push to the shared cache, cache entry: everything after a successful evaluation. */
  private async finish(
    workspace: string,
    json: DevEnvJson,
    recipe: Record<string, unknown>,
    key: string,
    files: CacheEntry["meta"]["files"],
    flakeRef: string,
    ctx: RunContext,
  ): Promise<{ entry: CacheEntry; publication?: Publication }> {
    const storePath = envStorePath(json);
    if (!storePath) throw new ActionError("internal", "nix print-dev-env did not report the environment's store path");
    let environment = environmentFromDevEnv(json);
    const hook = shellHookOf(json);
    if (hook.trim() !== "") {
      ctx.progress({ phase: "hooks", message: "running the shell hook" });
      try {
        environment = await runShellHook(json, {
          cwd: workspace,
          signal: ctx.signal,
          timeoutMs: this.settings.hookTimeoutMs ?? 60_000,
          onOutput: (s, d) => ctx.output(s, d),
        });
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        throw new ActionError("invalid_request", `the dev shell's shellHook failed: ${(err as Error).message}`);
      }
    }
    const system = this.settings.system;
    const root = this.cache.gcRoot(system, key);
    mkdirSync(dirname(root), { recursive: true });
    const cacheArgs = substituterArgs(this.settings.binaryCache);
    await execNix("nix-store", ["--add-root", root, "--realise", storePath, ...cacheArgs], {
      env: this.settings.nixEnv,
      signal: ctx.signal,
    }).catch((err: unknown) => {
      if (ctx.signal.aborted) throw err;
      const reason = (err as { stderr?: string }).stderr || (err as Error).message;
      throw new ActionError("unavailable", `the environment was built but its garbage-collector root could not be registered: ${reason}`, {
        cause: err,
      });
    });
    const inputs = await flakeInputPaths(ctx, flakeRef, cacheArgs, this.settings.nixEnv);
    await rootFlakeInputs(ctx, root, inputs, this.settings.nixEnv).catch((err: unknown) => {
      if (ctx.signal.aborted) throw err;
      ctx.output("stderr", `warning: the flake inputs could not be rooted against garbage collection: ${(err as Error).message}\n`);
    });
    const cache = this.settings.binaryCache;
    const publication = cache?.push ? await publishClosure(ctx, cache, [storePath, ...inputs], this.settings.nixEnv) : undefined;
    const entry = this.cache.publish(
      {
        key,
        system,
        envStorePath: storePath,
        recipe,
        files,
        inputs,
        ...(publication ? { publication } : {}),
        ...(this.settings.nixVersion ? { nixVersion: this.settings.nixVersion } : {}),
        hookRan: hook.trim() !== "",
        createdAt: new Date().toISOString(),
      },
      environment,
    );
    this.profiles.prune(workspace);
    return { entry, ...(publication ? { publication } : {}) };
  }
}
