import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";

/** Samples the ring keeps at most, whatever the interval (an hour at the default 2 s is 1800). */
export const METRICS_MAX_SAMPLES = 3600;

const Bytes = Type.Integer({ minimum: 0 });

/** One sample of the sandbox, taken every `intervalMs`. */
export const MetricsSample = Type.Object({
  at: Type.Integer({ description: "when it was taken, ms since the epoch" }),
  cpu: Type.Object({
    usedCores: Type.Number({ description: "cores busy on average since the previous sample (1.5 = one and a half)" }),
    cores: Type.Number({ description: "cores the sandbox may use: its cgroup's cpu.max quota, else the CPUs online" }),
  }),
  memory: Type.Object({
    usedBytes: Bytes,
    cacheBytes: Type.Integer({ minimum: 0, description: "page cache (file-backed, reclaimable), not in usedBytes" }),
    limitBytes: Type.Integer({ minimum: 0, description: "the cgroup's memory limit, else the machine's memory" }),
  }),
  daemon: Type.Object({
    rssBytes: Bytes,
    cpuCores: Type.Number({ description: "cores the daemon itself used since the previous sample" }),
  }),
  disks: Type.Array(
    Type.Object({
      name: Type.Union([Type.Literal("home"), Type.Literal("state"), Type.Literal("nix")]),
      path: Type.String(),
      usedBytes: Bytes,
      freeBytes: Type.Integer({ minimum: 0, description: "what an unprivileged process may still write" }),
    }),
    { maxItems: 3 },
  ),
  processes: Type.Integer({ minimum: 0, description: "processes in the sandbox" }),
  connections: Type.Integer({
    minimum: 0,
    description: "open TCP connections to the daemon's port (clients, pages, MCP, previews), counted every 10 s",
  }),
  runningJobs: Type.Integer({ minimum: 0 }),
  jobs: Type.Object(
    { cpuCores: Type.Number(), rssBytes: Bytes },
    { description: "the running process jobs together (their usage): cores used since the previous sample, resident memory" },
  ),
  output: Type.Object(
    { writtenBytes: Type.Integer({ minimum: 0, description: "job output written since the previous sample" }), keptBytes: Bytes },
    { description: "job output: written in the interval, kept on disk in all" },
  ),
});

export const stateMetrics = defineAction({
  name: "state.metrics",
  scope: "observe",
  summary: "Sandbox metrics over time: CPU, memory, disks, processes, connections and jobs, sampled every few seconds for the last hour.",
  params: Type.Object(
    {
      sinceMs: Type.Optional(
        Type.Integer({ minimum: 0, description: "only samples taken after this time (ms since the epoch: pass the last `at` you have)" }),
      ),
      limit: Type.Optional(
        Type.Integer({ minimum: 1, maximum: METRICS_MAX_SAMPLES, description: "the newest this many of them (default 30)" }),
      ),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    intervalMs: Type.Integer({ description: "between two samples" }),
    windowMs: Type.Integer({ description: "how far back samples are kept" }),
    enabled: Type.Boolean({ description: "false when the daemon runs with --metrics off: no samples" }),
    sources: Type.Object(
      { cpu: Type.String(), memory: Type.String() },
      { description: "where CPU and memory are read: a cgroup's files or the machine's /proc" },
    ),
    samples: Type.Array(MetricsSample, { description: "oldest first" }),
    more: Type.Boolean({ description: "older samples after sinceMs were left out by limit" }),
  }),
});
