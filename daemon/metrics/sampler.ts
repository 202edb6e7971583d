import type { Static } from "@sinclair/typebox";
import type { Logger } from "pino";
import { METRICS_MAX_SAMPLES, type MetricsSample, type stateMetrics } from "../../protocol/actions/state-metrics.js";
import type { JobUsage } from "../../protocol/common.js";
import type { ResultOf } from "../../protocol/define.js";
import type { Job } from "../jobs/job.js";
import type { JobManager, UsageMeter } from "../jobs/manager.js";
import { outputStats } from "../jobs/output-stats.js";
import { CLOCK_TICKS, onMainExit, pageSize } from "../process/index.js";
import { JobTrees, type TreeRoot, type TreeUsage } from "./job-trees.js";
import { Ring } from "./ring.js";
import { diskUsage, sandboxSource } from "./sandbox.js";
import { listPids, Slicer } from "./slices.js";
import { establishedOn } from "./tcp.js";

export type Sample = Static<typeof MetricsSample>;

/** A running process job as the tree sampler knows it. */
const rootOf = (job: Job): TreeRoot => ({
  id: job.id,
  pid: job.control.pid!,
  startedAt: Date.parse(job.record.startedAt ?? job.record.createdAt),
});
export type MetricsReply = ResultOf<typeof stateMetrics>;

/** How often running jobs' processes are read: often enough to catch a short peak, at a bounded cost. */
export const JOB_INTERVAL_MS = 500;
/** How far back samples go (fewer when the interval is so short that METRICS_MAX_SAMPLES fill sooner). */
export const WINDOW_MS = 3_600_000;
/** The sampler's own cost, at most, as a fraction of one core over time: past it, passes are spaced out. */
export const CPU_BUDGET = 0.01;
/**
 * CPU (ms) the sampler may spend ahead of its budget: a burst such as the first pass, which meets
 * every process of the machine, runs at once; a job of tens of thousands of processes soon uses
 * it up and is then sampled as often as CPU_BUDGET allows (every 10–30 s).
 */
export const CPU_BURST_MS = 50;
/**
 * Connections are counted from /proc/net/tcp{,6} at most this often: the kernel walks its whole
 * connection table to write them (≈ 2 ms of CPU each here), more than all else a sample reads.
 */
const CONNECTIONS_EVERY_MS = 10_000;
/** state.metrics without `limit`: the last minute at the default interval. */
const DEFAULT_LIMIT = 30;

export interface SamplerOptions {
  jobs: JobManager;
  /** Between two sandbox samples. */
  intervalMs: number;
  /** The disks reported: the home, the state directory, /nix (each by its name, never by its path in a label). */
  disks: ReadonlyArray<{ name: "home" | "state" | "nix"; path: string }>;
  /** The daemon's port and the SSH server's (0: none), for the connection counts; known once they listen. */
  ports: () => { api: number; ssh: number };
  log: Logger;
}

/** What the previous sandbox sample read, to turn running totals into rates. */
interface Baseline {
  mono: number;
  cpuUsedUs: number;
  daemonCpuUs: number;
  jobTicks: number;
  writtenBytes: number;
}

/**
 * The sampler: every JOB_INTERVAL_MS while process jobs run, each one's process tree (usage live in
 * its status, final at its end); every `intervalMs` the sandbox (CPU and memory of its cgroup,
 * disks, processes, connections, jobs) into a ring of an hour. One timer, work in slices of
 * SLICE_MS; when a pass costs more than CPU_BUDGET allows (tens of thousands of processes), the
 * next one waits longer. Nothing runs on a job's start: a job is seen at the next pass.
 */
export class MetricsSampler implements UsageMeter {
  readonly ring: Ring<Sample>;
  readonly source = sandboxSource();
  private readonly trees: JobTrees;
  private cores: number;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private nextSandboxAt = 0;
  /** Processes at the last count: few, and /proc is listed in one read. */
  private lastProcesses: number | undefined;
  /** The budget not yet spent (ms of CPU), refilled at CPU_BUDGET per ms of time, at most CPU_BURST_MS. */
  private credit = CPU_BURST_MS;
  private creditAt = performance.now();
  private baseline: Baseline | undefined;
  /** Per running job: its kind and the CPU ticks already added to jobCpuTicks. */
  private readonly counted = new Map<string, { kind: string; ticks: number }>();
  /** CPU of process jobs by kind since the daemon started (clock ticks): the Prometheus counter. */
  readonly jobCpuTicks = new Map<string, number>();
  private jobTicksTotal = 0;
  /** The sampler's own time in slices, and its passes, since it started. */
  costMs = 0;
  passes = 0;
  /** The latest connection counts (daemon port, SSH port), and when they were taken. */
  connections = { api: 0, ssh: 0 };
  private connectionsAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: SamplerOptions) {
    this.ring = new Ring(Math.min(METRICS_MAX_SAMPLES, Math.ceil(WINDOW_MS / options.intervalMs)));
    this.cores = this.source.read().cores;
    this.trees = new JobTrees(() => this.cores);
  }

  get intervalMs(): number {
    return this.options.intervalMs;
  }

  get windowMs(): number {
    return this.ring.capacity * this.options.intervalMs;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.baseline = this.readBaseline(performance.now());
    // A job's main process has just been reaped: its CPU is in the daemon's children's total now.
    onMainExit((jobId) => {
      const job = this.options.jobs.find(jobId);
      if (job?.control.pid !== undefined) this.trees.rootExited(rootOf(job));
    });
    this.nextSandboxAt = performance.now() + this.options.intervalMs;
    this.schedule(Math.min(JOB_INTERVAL_MS, this.options.intervalMs));
  }

  stop(): void {
    this.running = false;
    clearTimeout(this.timer);
    onMainExit(undefined);
  }

  /** UsageMeter: a process job's usage at its end, from one last look at what is left of it. */
  finalUsage(job: Job): JobUsage | undefined {
    if (!this.running) return undefined;
    const tree = this.trees.final(job.id);
    if (!tree) return job.usage;
    this.count(job.id, job.record.kind, tree);
    this.counted.delete(job.id);
    const usage = this.toUsage(tree);
    // The final figure never says less than a live one did.
    const live = job.usage;
    return live
      ? { ...usage, cpuMs: Math.max(usage.cpuMs, live.cpuMs), peakRssBytes: Math.max(usage.peakRssBytes, live.peakRssBytes) }
      : usage;
  }

  /** state.metrics: the samples after `sinceMs`, at most `limit` (the newest). */
  reply(sinceMs: number | undefined, limit = DEFAULT_LIMIT): MetricsReply {
    const { items, more } = this.ring.since(sinceMs, limit);
    return {
      intervalMs: this.options.intervalMs,
      windowMs: this.windowMs,
      enabled: this.running,
      sources: { cpu: this.source.cpu, memory: this.source.memory },
      samples: items,
      more,
    };
  }

  private schedule(delayMs: number): void {
    if (!this.running) return;
    this.timer = setTimeout(() => void this.tick(), delayMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    const slicer = new Slicer();
    try {
      const jobs = [...this.options.jobs.runningProcessJobs()];
      const jobsRan = jobs.length > 0;
      if (jobsRan) await this.sampleJobs(jobs, slicer);
      if (performance.now() >= this.nextSandboxAt) {
        this.nextSandboxAt = performance.now() + this.options.intervalMs;
        await this.sampleSandbox(slicer, jobsRan ? this.trees.processes : undefined);
      }
    } catch (err) {
      this.options.log.warn({ err }, "metrics sampling failed; trying again at the next interval");
    }
    const cost = slicer.finish();
    this.costMs += cost;
    this.passes++;
    const now = performance.now();
    this.credit = Math.min(CPU_BURST_MS, this.credit + (now - this.creditAt) * CPU_BUDGET) - cost;
    this.creditAt = now;
    // Idle, a tick only looks for running jobs (no /proc read), so a new job's first sample comes within JOB_INTERVAL_MS.
    const due = Math.min(JOB_INTERVAL_MS, Math.max(0, this.nextSandboxAt - now));
    this.schedule(Math.max(due, -this.credit / CPU_BUDGET));
  }

  private async sampleJobs(jobs: Job[], slicer: Slicer): Promise<void> {
    const usage = await this.trees.sample(jobs.map(rootOf), slicer);
    for (const job of jobs) {
      const tree = usage.get(job.id);
      if (!tree || job.finished) continue;
      this.count(job.id, job.record.kind, tree);
      job.reportUsage(this.toUsage(tree));
    }
  }

  /** Adds what a job used since it was last counted to its kind's CPU total. */
  private count(id: string, kind: string, tree: TreeUsage): void {
    const seen = this.counted.get(id) ?? { kind, ticks: 0 };
    const delta = Math.max(0, tree.cpuTicks - seen.ticks);
    seen.ticks += delta;
    this.counted.set(id, seen);
    this.jobTicksTotal += delta;
    this.jobCpuTicks.set(kind, (this.jobCpuTicks.get(kind) ?? 0) + delta);
  }

  private toUsage(tree: TreeUsage): JobUsage {
    const page = pageSize();
    return {
      cpuMs: Math.round((tree.cpuTicks * 1000) / CLOCK_TICKS),
      rssBytes: tree.rssPages * page,
      peakRssBytes: tree.peakPages * page,
      processes: tree.processes,
    };
  }

  private readBaseline(mono: number): Baseline {
    const cpu = process.cpuUsage();
    return {
      mono,
      cpuUsedUs: this.source.read().cpuUsedUs,
      daemonCpuUs: cpu.user + cpu.system,
      jobTicks: this.jobTicksTotal,
      writtenBytes: outputStats.writtenBytes,
    };
  }

  private async sampleSandbox(slicer: Slicer, processes: number | undefined): Promise<void> {
    const mono = performance.now();
    const reading = this.source.read();
    this.cores = reading.cores;
    const now = this.readBaseline(mono);
    now.cpuUsedUs = reading.cpuUsedUs;
    const before = this.baseline ?? now;
    this.baseline = now;
    const seconds = (mono - before.mono) / 1000;
    const rate = (delta: number): number => (seconds > 0 ? Math.max(0, delta) / seconds : 0);
    const ports = this.options.ports();
    const listed = processes === undefined ? (await listPids(slicer, 0, this.lastProcesses)).total : processes;
    this.lastProcesses = listed;
    slicer.pause(); // statfs and /proc/net/tcp are read on the thread pool
    const countNow = mono - this.connectionsAt >= CONNECTIONS_EVERY_MS;
    const [disks, connections] = await Promise.all([
      Promise.all(this.options.disks.map(async (d) => ({ ...d, usage: await diskUsage(d.path) }))),
      countNow ? establishedOn([ports.api, ports.ssh]) : undefined,
    ]).finally(() => slicer.resume());
    if (connections) {
      this.connections = { api: connections[0]!, ssh: connections[1]! };
      this.connectionsAt = mono;
    }
    let jobsRss = 0;
    for (const job of this.options.jobs.runningProcessJobs()) jobsRss += job.usage?.rssBytes ?? 0;
    const round = (n: number): number => Math.round(n * 1000) / 1000;
    this.ring.push({
      at: Date.now(),
      cpu: { usedCores: round(rate(now.cpuUsedUs - before.cpuUsedUs) / 1e6), cores: round(reading.cores) },
      memory: { usedBytes: reading.usedBytes, cacheBytes: reading.cacheBytes, limitBytes: reading.limitBytes },
      daemon: { rssBytes: process.memoryUsage.rss(), cpuCores: round(rate(now.daemonCpuUs - before.daemonCpuUs) / 1e6) },
      disks: disks.flatMap((d) => (d.usage ? [{ name: d.name, path: d.path, ...d.usage }] : [])),
      processes: listed,
      connections: this.connections.api,
      runningJobs: this.options.jobs.counts().running ?? 0,
      jobs: { cpuCores: round(rate(now.jobTicks - before.jobTicks) / CLOCK_TICKS), rssBytes: jobsRss },
      output: { writtenBytes: Math.max(0, now.writtenBytes - before.writtenBytes), keptBytes: this.options.jobs.outputBytesUsed() },
    });
  }
}
