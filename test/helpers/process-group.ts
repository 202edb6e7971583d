import { execFileSync } from "node:child_process";

/** Pids of every live process (zombies are dead, merely unreaped) whose process group is `pgid`. */
export function groupMembers(pgid: number): number[] {
  const out = execFileSync("ps", ["-e", "-o", "pid=,pgid=,stat="], { encoding: "utf8" });
  return out
    .split("\n")
    .map((l) => l.trim().split(/\s+/))
    .filter(([, g, stat]) => Number(g) === pgid && !stat?.startsWith("Z"))
    .map(([p]) => Number(p));
}
