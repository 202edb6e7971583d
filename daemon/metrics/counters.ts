import { ERROR_CODES } from "../../protocol/errors.js";
import { ACTIONS } from "../../protocol/index.js";

/** Request latencies' buckets (seconds): 0.5 ms (a state.info) to 10 minutes (a long wait). */
export const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 600];
/** Job durations' buckets (seconds): 10 ms to a day. */
export const DURATION_BUCKETS = [0.01, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600, 14_400, 86_400];

/** One histogram series: cumulative-ready counts per bucket (the last is +Inf), their sum and count. */
export class Buckets {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    let i = 0;
    while (i < this.bounds.length && value > this.bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

/**
 * Histograms by one label, filled on the hot path without allocating (a Map lookup and an
 * increment); the label's values are bounded by whoever calls observe.
 */
export class LabelledHistogram {
  readonly series = new Map<string, Buckets>();

  constructor(readonly bounds: readonly number[]) {}

  observe(label: string, value: number): void {
    let buckets = this.series.get(label);
    if (!buckets) this.series.set(label, (buckets = new Buckets(this.bounds)));
    buckets.observe(value);
  }
}

/** Counts by a pair of labels, kept as "a\0b" keys. */
export class PairCounter {
  readonly counts = new Map<string, number>();

  inc(a: string, b: string, by = 1): void {
    const key = `${a}\0${b}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + by);
  }

  *entries(): Generator<[string, string, number]> {
    for (const [key, n] of this.counts) {
      const at = key.indexOf("\0");
      yield [key.slice(0, at), key.slice(at + 1), n];
    }
  }
}

const KNOWN_ACTIONS = new Set<string>(ACTIONS.map((a) => a.name));
const KNOWN_CODES = new Set<string>(Object.keys(ERROR_CODES));
/** Job kinds kept apart at most; more (there are about ten) go under "other", so no client can grow the series. */
const MAX_KINDS = 32;

/**
 * What the daemon counts as it goes, for /metrics: requests by action and outcome with their
 * latency, jobs ended by kind and state with their duration, preview requests. Label values are
 * the protocol's own names (an unknown action is "unknown", an unknown code "error"): never a
 * client's string, a job id or a path, so the series stay as many whatever clients send.
 */
export class DaemonCounters {
  readonly requests = new PairCounter();
  readonly requestSeconds = new LabelledHistogram(LATENCY_BUCKETS);
  readonly jobsEnded = new PairCounter();
  readonly jobSeconds = new LabelledHistogram(DURATION_BUCKETS);
  previewRequests = 0;
  private readonly kinds = new Set<string>();

  /** One request answered: its action (as the client named it), "ok" or its error code, and how long it took. */
  readonly request = (action: string | undefined, outcome: string, ms: number): void => {
    const name = action !== undefined && KNOWN_ACTIONS.has(action) ? action : "unknown";
    this.requests.inc(name, outcome === "ok" || KNOWN_CODES.has(outcome) ? outcome : "error");
    this.requestSeconds.observe(name, ms / 1000);
  };

  /** A job ended: its kind, final state and how long it ran (ms; undefined if it never started). */
  jobEnded(kind: string, state: string, ms: number | undefined): void {
    const label = this.kind(kind);
    this.jobsEnded.inc(label, state);
    if (ms !== undefined) this.jobSeconds.observe(label, Math.max(0, ms) / 1000);
  }

  /** A job kind as a label value: the first MAX_KINDS seen keep their name. */
  kind(kind: string): string {
    if (this.kinds.has(kind)) return kind;
    if (this.kinds.size >= MAX_KINDS) return "other";
    this.kinds.add(kind);
    return kind;
  }
}
