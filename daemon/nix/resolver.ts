import { mkdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve as resolvePath } from "node:path";
import { writeFileAtomicSync } from "../util/atomic-write.js";
import type { PreparedEnvironment } from "./environment.js";
import type { NixpkgsPin } from "./pin.js";

/** One prepared workspace as the index remembers it (and as state.catalog lists it). */
export interface PreparedWorkspace {
  workspace: string;
  system: string;
  cacheKey: string;
  entryDir: string;
  packages?: string[];
  flake?: string;
  nixpkgs?: NixpkgsPin;
  preparedAt: string;
}

interface IndexFile {
  version: 1;
  workspaces: PreparedWorkspace[];
}

/**
 * Gives a job the environment of the deepest prepared workspace containing its cwd. The index of
 * prepared workspaces is persisted under the state dir and the environments are held in memory,
 * so resolving costs a few map lookups and never a Nix process; it survives daemon restarts.
 */
export class WorkspaceEnvironments {
  private readonly byWorkspace = new Map<string, { info: PreparedWorkspace; environment: PreparedEnvironment }>();
  private readonly indexPath: string;

  constructor(stateDir: string) {
    this.indexPath = join(stateDir, "nix", "workspaces.json");
    this.load();
  }

  private load(): void {
    let index: IndexFile;
    try {
      index = JSON.parse(readFileSync(this.indexPath, "utf8")) as IndexFile;
    } catch {
      return;
    }
    for (const info of index.workspaces ?? []) {
      try {
        const environment = JSON.parse(readFileSync(join(info.entryDir, "env.json"), "utf8")) as PreparedEnvironment;
        this.byWorkspace.set(info.workspace, { info, environment });
      } catch {
        // The cache entry was removed: the workspace is simply not prepared any more.
      }
    }
  }

  private persist(): void {
    mkdirSync(dirname(this.indexPath), { recursive: true });
    const index: IndexFile = { version: 1, workspaces: this.list() };
    writeFileAtomicSync(this.indexPath, `${JSON.stringify(index, null, 2)}\n`, { fsync: true });
  }

  /** Makes `environment` the one jobs under `info.workspace` get, and saves the index. */
  record(info: PreparedWorkspace, environment: PreparedEnvironment): void {
    this.byWorkspace.set(info.workspace, { info, environment });
    this.persist();
  }

  /** The prepared environment for a job whose cwd is `cwd`, or null outside every prepared workspace. */
  resolve(cwd: string): (PreparedEnvironment & { workspace: string }) | null {
    let dir = resolvePath(cwd);
    for (;;) {
      const hit = this.byWorkspace.get(dir);
      if (hit) return { workspace: dir, set: hit.environment.set, prepend: hit.environment.prepend };
      const parent = dirname(dir);
      if (parent === dir) return null;
      dir = parent;
    }
  }

  /** The record for exactly this workspace. */
  get(workspace: string): { info: PreparedWorkspace; environment: PreparedEnvironment } | undefined {
    return this.byWorkspace.get(resolvePath(workspace));
  }

  /** Every prepared workspace, sorted by path. */
  list(): PreparedWorkspace[] {
    return [...this.byWorkspace.values()].map((v) => v.info).sort((a, b) => a.workspace.localeCompare(b.workspace));
  }
}
