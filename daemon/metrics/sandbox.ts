import { closeSync, existsSync, openSync, readSync } from "node:fs";
import { statfs } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { CLOCK_TICKS } from "../process/index.js";

/** CPU and memory of the sandbox as one reading; CPU is a running total (µs), turned into cores between two readings. */
export interface SandboxReading {
  cpuUsedUs: number;
  cores: number;
  usedBytes: number;
  cacheBytes: number;
  limitBytes: number;
}

/** Where a reading comes from: the files of a cgroup (the container's, v2 or v1) or the machine's /proc. */
export interface Source {
  cpu: string;
  memory: string;
  read(): SandboxReading;
}

const scratch = Buffer.allocUnsafe(16 * 1024);

/** A small file's text (cgroup and /proc files are a few KiB at most; more is cut), or undefined. */
function readSmall(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return undefined;
  }
  try {
    let length = 0;
    for (;;) {
      const n = readSync(fd, scratch, length, scratch.length - length, null);
      if (n === 0 || (length += n) === scratch.length) break;
    }
    return scratch.toString("latin1", 0, length);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** `key value` lines (memory.stat, cpu.stat, /proc/meminfo with its "kB") as numbers. */
export function keyedNumbers(text: string | undefined): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of (text ?? "").split("\n")) {
    const m = /^(\w+):?\s+(\d+)/.exec(line);
    if (m) out.set(m[1]!, Number(m[2]) * (line.endsWith(" kB") ? 1024 : 1));
  }
  return out;
}

const num = (text: string | undefined): number | undefined => {
  const value = Number(text?.trim());
  return text !== undefined && text.trim() !== "" && Number.isFinite(value) ? value : undefined;
};

/** The machine's memory: MemTotal, and used/cache as free(1) counts them. */
function meminfo(): { total: number; used: number; cache: number } {
  const m = keyedNumbers(readSmall("/proc/meminfo"));
  const total = m.get("MemTotal") ?? 0;
  const cache = (m.get("Buffers") ?? 0) + (m.get("Cached") ?? 0);
  const used = total - (m.get("MemFree") ?? 0) - cache - (m.get("SReclaimable") ?? 0);
  return { total, used: Math.max(0, used), cache };
}

/** A limit of "max", or one above the machine's memory, is no limit: the machine's memory is. */
function limitOf(value: number | undefined, machine: number): number {
  return value === undefined || !Number.isFinite(value) || value <= 0 || value >= machine ? machine : value;
}

/** Cores a quota allows (quota / period), never more than the CPUs this process may run on. */
function coresOf(quotaUs: number | undefined, periodUs: number | undefined): number {
  const cpus = availableParallelism();
  if (quotaUs === undefined || periodUs === undefined || quotaUs <= 0 || periodUs <= 0) return cpus;
  return Math.min(cpus, quotaUs / periodUs);
}

/** cgroup v2 at /sys/fs/cgroup: inside a container (its own cgroup namespace) that is the container's cgroup. */
function cgroupV2(root: string): Source | undefined {
  if (!existsSync(`${root}/cgroup.controllers`) || readSmall(`${root}/cpu.stat`) === undefined) return undefined;
  const hasMemory = readSmall(`${root}/memory.current`) !== undefined;
  return {
    cpu: `cgroup v2 ${root} (cpu.stat, cpu.max)`,
    memory: hasMemory ? `cgroup v2 ${root} (memory.current, memory.stat, memory.max)` : "/proc/meminfo",
    read() {
      const [quota, period] = (readSmall(`${root}/cpu.max`) ?? "max").trim().split(/\s+/);
      const machine = meminfo();
      let memory = { usedBytes: machine.used, cacheBytes: machine.cache, limitBytes: machine.total };
      if (hasMemory) {
        const current = num(readSmall(`${root}/memory.current`)) ?? 0;
        const file = keyedNumbers(readSmall(`${root}/memory.stat`)).get("file") ?? 0;
        const limit = limitOf(num(readSmall(`${root}/memory.max`)), machine.total);
        memory = { usedBytes: Math.max(0, current - file), cacheBytes: file, limitBytes: limit };
      }
      return {
        cpuUsedUs: keyedNumbers(readSmall(`${root}/cpu.stat`)).get("usage_usec") ?? 0,
        cores: coresOf(quota === "max" ? undefined : num(quota), num(period)),
        ...memory,
      };
    },
  };
}

/** cgroup v1: cpuacct and cpu (CFS quota), memory; the mount's root is the container's cgroup in a container. */
function cgroupV1(base: string): Source | undefined {
  const cpuacct = [`${base}/cpuacct`, `${base}/cpu,cpuacct`].find((d) => readSmall(`${d}/cpuacct.usage`) !== undefined);
  const cpu = [`${base}/cpu`, `${base}/cpu,cpuacct`].find((d) => readSmall(`${d}/cpu.cfs_quota_us`) !== undefined);
  const memory = readSmall(`${base}/memory/memory.usage_in_bytes`) !== undefined ? `${base}/memory` : undefined;
  if (!cpuacct || !memory) return undefined;
  return {
    cpu: `cgroup v1 ${cpuacct} (cpuacct.usage${cpu ? ", cpu.cfs_quota_us" : ""})`,
    memory: `cgroup v1 ${memory} (memory.usage_in_bytes, memory.stat, memory.limit_in_bytes)`,
    read() {
      const machine = meminfo();
      const stat = keyedNumbers(readSmall(`${memory}/memory.stat`));
      const cache = stat.get("total_cache") ?? stat.get("cache") ?? 0;
      const usage = num(readSmall(`${memory}/memory.usage_in_bytes`)) ?? 0;
      return {
        cpuUsedUs: (num(readSmall(`${cpuacct}/cpuacct.usage`)) ?? 0) / 1000,
        cores: coresOf(
          cpu ? num(readSmall(`${cpu}/cpu.cfs_quota_us`)) : undefined,
          cpu ? num(readSmall(`${cpu}/cpu.cfs_period_us`)) : undefined,
        ),
        usedBytes: Math.max(0, usage - cache),
        cacheBytes: cache,
        limitBytes: limitOf(num(readSmall(`${memory}/memory.limit_in_bytes`)), machine.total),
      };
    },
  };
}

/** No cgroup files: the machine's /proc/stat (busy ticks of all CPUs) and /proc/meminfo. */
function machine(): Source {
  return {
    cpu: "/proc/stat",
    memory: "/proc/meminfo",
    read() {
      // The first line: cpu user nice system idle iowait irq softirq steal …; busy is all but idle and iowait.
      const fields = (readSmall("/proc/stat") ?? "").split("\n", 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
      const busy = fields.reduce((sum, v, i) => (i === 3 || i === 4 || i > 7 || !Number.isFinite(v) ? sum : sum + v), 0);
      const mem = meminfo();
      return {
        cpuUsedUs: (busy * 1_000_000) / CLOCK_TICKS,
        cores: availableParallelism(),
        usedBytes: mem.used,
        cacheBytes: mem.cache,
        limitBytes: mem.total,
      };
    },
  };
}

/** The sandbox's CPU and memory source, chosen once: cgroup v2, else v1, else /proc. */
export function sandboxSource(cgroupRoot = "/sys/fs/cgroup"): Source {
  return cgroupV2(cgroupRoot) ?? cgroupV1(cgroupRoot) ?? machine();
}

/** Used and free bytes of the filesystem holding `path` (free: what an unprivileged process may still write); off the event loop. */
export async function diskUsage(path: string): Promise<{ usedBytes: number; freeBytes: number } | undefined> {
  try {
    const s = await statfs(path);
    return { usedBytes: Math.max(0, (s.blocks - s.bfree) * s.bsize), freeBytes: s.bavail * s.bsize };
  } catch {
    return undefined;
  }
}
