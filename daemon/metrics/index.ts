import { existsSync } from "node:fs";
import { homedir } from "node:os";
import type { Logger } from "pino";
import type { Job } from "../jobs/job.js";
import type { JobManager } from "../jobs/manager.js";
import { DaemonCounters } from "./counters.js";
import { type ExpositionSources, PrometheusExposition } from "./prometheus.js";
import { type MetricsReply, MetricsSampler } from "./sampler.js";

/**
 * The daemon's measures of itself and its sandbox: the sampler (jobs' usage, the ring of sandbox
 * samples behind state.metrics), the counters the dispatcher and jobs feed, and the Prometheus
 * exposition of /metrics that reads them all.
 */
export interface Metrics {
  /** Undefined with --metrics off. */
  sampler: MetricsSampler | undefined;
  counters: DaemonCounters;
  exposition: PrometheusExposition;
  /** state.metrics. */
  reply(sinceMs?: number, limit?: number): MetricsReply;
  /** Starts sampling (once the daemon listens, so the ports are known); stops at shutdown. */
  start(): void;
  stop(): void;
}

export interface MetricsOptions {
  enabled: boolean;
  intervalMs: number;
  stateDir: string;
  jobs: JobManager;
  tokens: ExpositionSources["tokens"];
  eventLoop: ExpositionSources["eventLoop"];
  version: string;
  ports: () => { api: number; ssh: number };
  log: Logger;
}

export function createMetrics(options: MetricsOptions): Metrics {
  const counters = new DaemonCounters();
  const disks: Array<{ name: "home" | "state" | "nix"; path: string }> = [
    { name: "home", path: homedir() },
    { name: "state", path: options.stateDir },
  ];
  if (existsSync("/nix")) disks.push({ name: "nix", path: "/nix" });
  const sampler = options.enabled
    ? new MetricsSampler({ jobs: options.jobs, intervalMs: options.intervalMs, disks, ports: options.ports, log: options.log })
    : undefined;
  // Every job's end, once: its kind, final state and how long it ran.
  options.jobs.on("job.state", (job: Job) => {
    if (!job.finished) return;
    const { kind, state, startedAt, endedAt } = job.record;
    counters.jobEnded(kind, state, startedAt && endedAt ? Date.parse(endedAt) - Date.parse(startedAt) : undefined);
  });
  const exposition = new PrometheusExposition({
    sampler,
    counters,
    jobs: options.jobs,
    tokens: options.tokens,
    eventLoop: options.eventLoop,
    version: options.version,
  });
  return {
    sampler,
    counters,
    exposition,
    reply: (sinceMs, limit) =>
      sampler?.reply(sinceMs, limit) ?? {
        intervalMs: options.intervalMs,
        windowMs: 0,
        enabled: false,
        sources: { cpu: "none (--metrics off)", memory: "none (--metrics off)" },
        samples: [],
        more: false,
      },
    start() {
      if (!sampler) return;
      options.jobs.setUsageMeter(sampler);
      sampler.start();
    },
    stop() {
      sampler?.stop();
      options.jobs.setUsageMeter(undefined);
    },
  };
}

/** Counts the requests a handler serves (the preview proxy's `handle`), without it knowing. */
export function countCalls<T extends object, K extends keyof T>(target: T, method: K, count: () => void): void {
  const original = target[method];
  if (typeof original !== "function") return;
  target[method] = function (this: unknown, ...args: unknown[]) {
    count();
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as T[K];
}
