import { stripAnsi, type NixLogEvent } from "../runners/nix-cli.js";

/**
 * Which derivation's builder failed, and its last log lines. Nix's final error names only the
 * wrapper ("1 dependencies of derivation '…-shell-env.drv' failed to build"), and with
 * internal-json logs its "builder for … failed" message carries no log tail, so both come from
 * the log records: a build activity (type 105) names its .drv, its lines arrive as results
 * (type 101) on that activity.
 */

const ACT_BUILD = 105;
const RES_BUILD_LOG_LINE = 101;
/** Lines kept per build, as Nix's own `log-lines` default. */
const TAIL_LINES = 25;
const MAX_LINE_CHARS = 2000;
/** Builds remembered at once (a prepare may run thousands); the oldest is forgotten first. */
const MAX_BUILDS = 256;
const MAX_FAILURES = 10;

const BUILDER_FAILED = /builder for '([^']+\.drv)' failed with exit code (\d+)/;
const CANNOT_BUILD = /Cannot build '([^']+\.drv)'[\s\S]*?exit code (\d+)/;

export interface FailedBuild {
  /** The derivation's name: its store path without hash and `.drv` (e.g. `broken`, `hello-2.12`). */
  name: string;
  drv: string;
  exitCode: number;
  /** The builder's last lines (at most 25). */
  log: string[];
}

/** Follows one Nix run's log records and reports the builds that failed. */
export class BuildFailures {
  private readonly drvOf = new Map<string, string>();
  private readonly tails = new Map<string, string[]>();
  private readonly failed: FailedBuild[] = [];

  feed(e: NixLogEvent): void {
    if (e.action === "start" && e.type === ACT_BUILD && typeof e.fields?.[0] === "string") {
      this.drvOf.set(e.id, e.fields[0]);
      this.tails.set(e.fields[0], []);
      if (this.tails.size > MAX_BUILDS) this.tails.delete(this.tails.keys().next().value!);
      if (this.drvOf.size > MAX_BUILDS) this.drvOf.delete(this.drvOf.keys().next().value!);
    } else if (e.action === "result" && e.type === RES_BUILD_LOG_LINE && e.fields?.[0] !== undefined) {
      const drv = this.drvOf.get(e.id);
      const tail = drv === undefined ? undefined : this.tails.get(drv);
      if (!tail) return;
      tail.push(stripAnsi(String(e.fields[0])).slice(0, MAX_LINE_CHARS));
      if (tail.length > TAIL_LINES) tail.shift();
    } else if (e.action === "msg" && e.level === 0 && this.failed.length < MAX_FAILURES) {
      const text = stripAnsi(e.raw_msg ?? e.msg);
      const m = BUILDER_FAILED.exec(text) ?? CANNOT_BUILD.exec(text);
      if (m && !this.failed.some((f) => f.drv === m[1])) {
        this.failed.push({ name: drvName(m[1]!), drv: m[1]!, exitCode: Number(m[2]), log: [...(this.tails.get(m[1]!) ?? [])] });
      }
    }
  }

  /** The failed builds, in the order Nix reported them. */
  list(): FailedBuild[] {
    return this.failed;
  }
}

/** `/nix/store/<hash>-hello-2.12.drv` → `hello-2.12`. */
export function drvName(drv: string): string {
  return (drv.split("/").at(-1) ?? drv).replace(/^[0-9a-z]{32}-/, "").replace(/\.drv$/, "");
}

/** The index in `packages` of the attribute a derivation name belongs to (`hello` for `hello-2.12`), or -1. */
export function packageIndexOf(name: string, packages: readonly string[]): number {
  return packages.findIndex((p) => {
    const attr = p.split(".").at(-1)!;
    return name === attr || name.startsWith(`${attr}-`);
  });
}
