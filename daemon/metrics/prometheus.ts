import { createRequire } from "node:module";
import type { Counter as CounterT, Gauge as GaugeT, Histogram as HistogramT, Registry as RegistryT } from "prom-client";
import type { JobManager } from "../jobs/manager.js";
import { outputStats } from "../jobs/output-stats.js";
import { CLOCK_TICKS } from "../process/index.js";
import type { Buckets, DaemonCounters, LabelledHistogram } from "./counters.js";
import type { MetricsSampler } from "./sampler.js";

/** What /metrics reports from, beyond the sampler: everything is read at scrape time, nothing is pushed. */
export interface ExpositionSources {
  /** Undefined when sampling is off (--metrics off): the sandbox gauges are left out. */
  sampler: MetricsSampler | undefined;
  counters: DaemonCounters;
  jobs: JobManager;
  tokens: { list(): Array<{ scope: string; use?: string }> };
  eventLoop: { report(): { p99Ms: number; maxMs: number; stalls: number } };
  version: string;
}

/** A scrape within this of the last one gets the same text: a flood of scrapes costs one rendering a second. */
const CACHE_MS = 1000;

type PromClient = {
  Registry: new () => RegistryT;
  Counter: typeof CounterT;
  Gauge: typeof GaugeT;
  Histogram: typeof HistogramT;
};

/**
 * prom-client's registry, counters and gauges, loaded on the first scrape. Not its package entry:
 * that loads its default metrics and with them OpenTelemetry's API (≈ 115 ms and 12 MB here); the
 * four classes the daemon uses load in ≈ 8 ms.
 */
function loadPromClient(): PromClient {
  const require = createRequire(import.meta.url);
  return {
    Registry: require("prom-client/lib/registry") as PromClient["Registry"],
    Counter: require("prom-client/lib/counter") as PromClient["Counter"],
    Gauge: require("prom-client/lib/gauge") as PromClient["Gauge"],
    Histogram: require("prom-client/lib/histogram") as PromClient["Histogram"],
  };
}

/**
 * The Prometheus text exposition of GET /metrics. Counters and gauges are prom-client's, set from
 * the daemon's own figures in their collect(); histograms are the daemon's fixed buckets
 * (counters.ts, filled per request without allocating) exported in prom-client's format. No label
 * carries a job id, a path or a client's string: the series are as many after 1,000 jobs as after one.
 */
export class PrometheusExposition {
  private registry: RegistryT | undefined;
  private cached: { at: number; text: Promise<string> } | undefined;

  constructor(private readonly sources: ExpositionSources) {}

  get contentType(): string {
    return "text/plain; version=0.0.4; charset=utf-8";
  }

  /** The exposition text; scrapes within CACHE_MS share one rendering. */
  text(): Promise<string> {
    const now = performance.now();
    if (this.cached && now - this.cached.at < CACHE_MS) return this.cached.text;
    const text = (this.registry ??= this.build()).metrics();
    this.cached = { at: now, text };
    text.catch(() => (this.cached = undefined));
    return text;
  }

  private build(): RegistryT {
    const prom = loadPromClient();
    const registry = new prom.Registry();
    const s = this.sources;
    const registers = [registry];
    const gauge = (
      name: string,
      help: string,
      read: (set: (value: number, labels?: Record<string, string>) => void) => void,
      labelNames: string[] = [],
    ) =>
      new prom.Gauge({
        name,
        help,
        labelNames,
        registers,
        collect() {
          this.reset();
          read((value, labels) => (labels ? this.set(labels, value) : this.set(value)));
        },
      });
    const counter = (
      name: string,
      help: string,
      read: (set: (value: number, labels?: Record<string, string>) => void) => void,
      labelNames: string[] = [],
    ) =>
      new prom.Counter({
        name,
        help,
        labelNames,
        registers,
        collect() {
          this.reset();
          read((value, labels) => (labels ? this.inc(labels, value) : this.inc(value)));
        },
      });
    const histogram = (name: string, help: string, label: string, source: LabelledHistogram) => {
      const metric = new prom.Histogram({ name, help, labelNames: [label], buckets: [...source.bounds], registers });
      // The buckets are the daemon's own: exported as prom-client exports its own.
      (metric as unknown as { getForPromString(): Promise<unknown> }).getForPromString = async () => ({
        name,
        help,
        type: "histogram",
        aggregator: "sum",
        values: [...source.series].flatMap(([value, buckets]) => histogramValues(name, { [label]: value }, buckets)),
      });
    };

    gauge("hotline_build_info", "The daemon's version (the value is always 1).", (set) => set(1, { version: s.version }), ["version"]);
    counter(
      "hotline_requests_total",
      "Requests answered, by action and outcome (ok or the error code).",
      (set) => {
        for (const [action, outcome, n] of s.counters.requests.entries()) set(n, { action, outcome });
      },
      ["action", "outcome"],
    );
    histogram("hotline_request_duration_seconds", "From a request's frame to its reply, by action.", "action", s.counters.requestSeconds);
    gauge(
      "hotline_jobs",
      "Jobs kept, by kind and state.",
      (set) => {
        for (const [kind, states] of s.jobs.countsByKind()) for (const [state, n] of states) set(n, { kind: s.counters.kind(kind), state });
      },
      ["kind", "state"],
    );
    gauge("hotline_jobs_running", "Jobs running now.", (set) => set(s.jobs.counts().running ?? 0));
    counter(
      "hotline_jobs_finished_total",
      "Jobs that ended, by kind and final state.",
      (set) => {
        for (const [kind, state, n] of s.counters.jobsEnded.entries()) set(n, { kind, state });
      },
      ["kind", "state"],
    );
    histogram("hotline_job_duration_seconds", "How long jobs ran, by kind.", "kind", s.counters.jobSeconds);
    counter("hotline_job_output_written_bytes_total", "Job output written to the logs.", (set) => set(outputStats.writtenBytes));
    counter("hotline_job_output_read_bytes_total", "Job output sent to clients (follows and jobs.output).", (set) =>
      set(outputStats.readBytes),
    );
    gauge("hotline_job_output_kept_bytes", "Job output kept on disk, all jobs together.", (set) => set(s.jobs.outputBytesUsed()));
    gauge("hotline_job_output_budget_bytes", "What job output may take on disk together.", (set) => set(s.jobs.outputBudgetBytes));
    gauge("hotline_event_loop_delay_p99_seconds", "The 99th percentile of event-loop delay since the daemon started.", (set) =>
      set(s.eventLoop.report().p99Ms / 1000),
    );
    gauge("hotline_event_loop_delay_max_seconds", "The longest event-loop delay since the daemon started.", (set) =>
      set(s.eventLoop.report().maxMs / 1000),
    );
    counter("hotline_event_loop_stalls_total", "Event-loop turns over 100 ms the daemon itself spent.", (set) =>
      set(s.eventLoop.report().stalls),
    );
    gauge(
      "hotline_tokens",
      "Issued tokens that hold, by scope and use (api, ssh, preview, cdp).",
      (set) => {
        const counts = new Map<string, number>();
        for (const t of s.tokens.list()) {
          const key = `${t.scope}\0${t.use ?? "api"}`;
          counts.set(key, (counts.get(key) ?? 0) + 1);
        }
        for (const [key, n] of counts) {
          const [scope, use] = key.split("\0");
          set(n, { scope: scope!, use: use! });
        }
      },
      ["scope", "use"],
    );
    counter("hotline_preview_requests_total", "HTTP requests the preview proxy handled.", (set) => set(s.counters.previewRequests));
    gauge("hotline_daemon_rss_bytes", "The daemon's resident memory.", (set) => set(process.memoryUsage.rss()));
    counter("hotline_daemon_cpu_seconds_total", "CPU the daemon's own process used (user + system).", (set) => {
      const cpu = process.cpuUsage();
      set((cpu.user + cpu.system) / 1e6);
    });

    const sampler = s.sampler;
    if (!sampler) return registry;
    const last = () => sampler.ring.last();
    gauge("hotline_connections", "Open TCP connections to the daemon's port (clients, pages, MCP, previews).", (set) =>
      set(sampler.connections.api),
    );
    gauge("hotline_ssh_connections", "Open connections to the SSH server (each holds the sessions of one client).", (set) =>
      set(sampler.connections.ssh),
    );
    gauge("hotline_cpu_used_cores", "Cores the sandbox used, over the last sample's interval.", (set) => {
      const sample = last();
      if (sample) set(sample.cpu.usedCores);
    });
    gauge("hotline_cpu_cores", "Cores the sandbox may use (its cgroup's cpu.max quota, else the CPUs online).", (set) => {
      const sample = last();
      if (sample) set(sample.cpu.cores);
    });
    gauge("hotline_memory_used_bytes", "Memory the sandbox uses, page cache not included.", (set) => {
      const sample = last();
      if (sample) set(sample.memory.usedBytes);
    });
    gauge("hotline_memory_cache_bytes", "The sandbox's page cache (file-backed, reclaimable).", (set) => {
      const sample = last();
      if (sample) set(sample.memory.cacheBytes);
    });
    gauge("hotline_memory_limit_bytes", "The sandbox's memory limit (its cgroup's, else the machine's memory).", (set) => {
      const sample = last();
      if (sample) set(sample.memory.limitBytes);
    });
    gauge(
      "hotline_disk_used_bytes",
      "Used bytes of the filesystem holding the home, the state directory, /nix.",
      (set) => {
        for (const d of last()?.disks ?? []) set(d.usedBytes, { disk: d.name });
      },
      ["disk"],
    );
    gauge(
      "hotline_disk_free_bytes",
      "Bytes an unprivileged process may still write there.",
      (set) => {
        for (const d of last()?.disks ?? []) set(d.freeBytes, { disk: d.name });
      },
      ["disk"],
    );
    gauge("hotline_processes", "Processes in the sandbox.", (set) => {
      const sample = last();
      if (sample) set(sample.processes);
    });
    gauge("hotline_jobs_memory_bytes", "Resident memory of the running jobs' processes together.", (set) => {
      const sample = last();
      if (sample) set(sample.jobs.rssBytes);
    });
    counter(
      "hotline_job_cpu_seconds_total",
      "CPU process jobs used (every process of each), by kind.",
      (set) => {
        for (const [kind, ticks] of sampler.jobCpuTicks) set(ticks / CLOCK_TICKS, { kind: s.counters.kind(kind) });
      },
      ["kind"],
    );
    counter("hotline_metrics_sampling_seconds_total", "Time the sampler itself spent reading /proc and the cgroup.", (set) =>
      set(sampler.costMs / 1000),
    );
    return registry;
  }
}

/** One histogram series in prom-client's export shape: cumulative buckets, +Inf, sum, count. */
function histogramValues(name: string, labels: Record<string, string>, buckets: Buckets): unknown[] {
  const values: unknown[] = [];
  let cumulative = 0;
  buckets.bounds.forEach((bound, i) => {
    cumulative += buckets.counts[i]!;
    values.push({ labels: { le: bound }, sharedLabels: labels, value: cumulative, metricName: `${name}_bucket` });
  });
  values.push({ labels: { le: "+Inf" }, sharedLabels: labels, value: buckets.count, metricName: `${name}_bucket` });
  values.push({ labels: {}, sharedLabels: labels, value: buckets.sum, metricName: `${name}_sum` });
  values.push({ labels: {}, sharedLabels: labels, value: buckets.count, metricName: `${name}_count` });
  return values;
}
