import { readFileSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";

/**
 * The kernel's OOM killer and jobs: every job process starts with an oom_score_adj this much above
 * the daemon's own (at most 1000), so when memory runs out the kernel takes the job, not the
 * daemon. Raising one's own processes' score needs no privilege; lowering it would.
 */
export const JOB_OOM_SCORE_RAISE = 500;

let jobScore: string | undefined;

/** The score jobs get: the daemon's own (read once) plus the raise. */
export function jobOomScoreAdj(): number {
  if (jobScore === undefined) {
    let own = 0;
    try {
      own = Number.parseInt(readFileSync("/proc/self/oom_score_adj", "utf8"), 10) || 0;
    } catch {
      own = 0; // no /proc: nothing to raise either
    }
    jobScore = String(Math.min(1000, own + JOB_OOM_SCORE_RAISE));
  }
  return Number(jobScore);
}

/**
 * Raises a just-started child's oom_score_adj from the parent: one small /proc write, no extra
 * fork or exec. The child may already have exec'd (the score survives exec); what it forked in
 * those microseconds keeps the daemon's score. Best effort: a child already gone, or no /proc.
 */
export function raiseOomScore(pid: number | undefined): void {
  if (pid === undefined) return;
  jobOomScoreAdj();
  try {
    writeFileSync(`/proc/${pid}/oom_score_adj`, jobScore!);
  } catch {
    // gone already, or /proc is not there: the job simply keeps the daemon's score
  }
}

/**
 * Where the kernel counts OOM kills: the daemon's cgroup v2 `memory.events` (it counts the whole
 * subtree, so also jobs in sub-cgroups), else the machine's /proc/vmstat. cgroup v1's
 * `memory.oom_control` is not used: it counts its own group only, not the groups below it.
 */
function counterFiles(): Array<{ path: string; field: string }> {
  const files: Array<{ path: string; field: string }> = [];
  try {
    const unified = readFileSync("/proc/self/cgroup", "utf8")
      .split("\n")
      .find((line) => line.startsWith("0::"));
    if (unified) files.push({ path: `/sys/fs/cgroup${unified.slice(3).replace(/\/$/, "")}/memory.events`, field: "oom_kill" });
  } catch {
    // no /proc/self/cgroup: the machine-wide counter only
  }
  files.push({ path: "/proc/vmstat", field: "oom_kill" });
  return files;
}

let counter: Promise<{ path: string; field: string } | undefined> | undefined;

async function readCounter(file: { path: string; field: string }): Promise<number | undefined> {
  const text = await readFile(file.path, "utf8").catch(() => undefined);
  const match = text && new RegExp(`^${file.field} (\\d+)$`, "m").exec(text);
  return match ? Number(match[1]) : undefined;
}

/** The OOM-kill count of the nearest counter this machine has; undefined when none can be read. */
export async function oomKillCount(): Promise<number | undefined> {
  counter ??= (async () => {
    for (const file of counterFiles()) if ((await readCounter(file)) !== undefined) return file;
    return undefined;
  })();
  const file = await counter;
  return file ? readCounter(file) : undefined;
}

let baseline: { count: number | undefined; at: number } | undefined;
const BASELINE_REFRESH_MS = 1000;

/**
 * The OOM-kill count as of a job's start, without I/O on the start path: the last sample, taken
 * again in the background when it is over a second old. A kill in that second could be blamed on a
 * job that is SIGKILLed for another reason; the message says "most likely".
 */
export function oomKillBaseline(now = Date.now()): number | undefined {
  if (!baseline || now - baseline.at > BASELINE_REFRESH_MS) {
    const sample = { count: baseline?.count, at: now };
    baseline = sample;
    void oomKillCount().then((count) => {
      if (baseline === sample) sample.count = count;
    });
  }
  return baseline.count;
}

/** Whether the OOM killer struck since `before` (a baseline): the words for a job that died of SIGKILL, or undefined. */
export async function oomKillText(before: number | undefined): Promise<string | undefined> {
  if (before === undefined) return undefined;
  const after = await oomKillCount();
  if (after === undefined || after <= before) return undefined;
  return `killed by SIGKILL while the kernel's OOM killer struck (its kill count went from ${before} to ${after}): most likely the job ran out of memory; give it less to do at once, or the machine more memory`;
}
