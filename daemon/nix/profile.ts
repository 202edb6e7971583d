import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/**
 * A per-workspace Nix profile under `<cacheDir>/gcroots/<system>/workspaces/`: Nix roots the new
 * environment itself, atomically, so a garbage collection between evaluation and our own root
 * cannot take it; older generations are pruned.
 */
export class WorkspaceProfiles {
  constructor(
    private readonly cacheDir: string,
    private readonly system: string,
  ) {}

  /** The arguments that make a Nix call record its result in the workspace's profile. */
  args(workspace: string): string[] {
    return ["--profile", this.path(workspace)];
  }

  path(workspace: string): string {
    const dir = join(this.cacheDir, "gcroots", this.system, "workspaces");
    mkdirSync(dir, { recursive: true });
    return join(dir, createHash("sha256").update(workspace).digest("hex").slice(0, 32));
  }

  /** Keeps the newest two generations of a workspace profile (the current and the one before). */
  prune(workspace: string): void {
    const profile = this.path(workspace);
    const base = basename(profile);
    const gens = readdirSync(dirname(profile))
      .map((f) => new RegExp(`^${base}-(\\d+)-link$`).exec(f))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => b - a);
    for (const n of gens.slice(2)) rmSync(join(dirname(profile), `${base}-${n}-link`), { force: true });
  }
}
