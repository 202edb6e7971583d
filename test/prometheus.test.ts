import { describe, expect, it } from "vitest";
import type { Frame, TestClient } from "./helpers/daemon.js";
import { useDaemon } from "./helpers/daemon.js";

/** One sample of the exposition: its metric name, labels and value. */
interface Series {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);

/** A label set `{a="x",b="y"}` (escapes \\, \", \n inside values), strictly; throws on anything else. */
function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf("=", i);
    if (eq < 0) throw new Error(`label without "=": ${line}`);
    const name = text.slice(i, eq);
    if (!LABEL_NAME.test(name) || name in labels) throw new Error(`bad or repeated label name ${name}: ${line}`);
    if (text[eq + 1] !== '"') throw new Error(`label value not quoted: ${line}`);
    let value = "";
    let j = eq + 2;
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] !== "\\") value += text[j];
      else {
        const next = text[++j];
        if (next === "n") value += "\n";
        else if (next === "\\" || next === '"') value += next;
        else throw new Error(`bad escape \\${next}: ${line}`);
      }
    }
    if (text[j] !== '"') throw new Error(`unterminated label value: ${line}`);
    labels[name] = value;
    i = j + 1;
    if (i < text.length) {
      if (text[i] !== ",") throw new Error(`expected "," between labels: ${line}`);
      i++;
    }
  }
  return labels;
}

function parseValue(text: string, line: string): number {
  if (text === "+Inf") return Number.POSITIVE_INFINITY;
  if (text === "-Inf") return Number.NEGATIVE_INFINITY;
  if (text === "NaN") return Number.NaN;
  if (!/^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`bad value ${text}: ${line}`);
  return Number(text);
}

/**
 * A strict parser of the Prometheus text format 0.0.4: HELP and TYPE once per family and before its
 * samples, names and labels by the grammar, each series (name + labels) once, a sample's family
 * declared, histograms with cumulative buckets ending in +Inf equal to _count, counters ≥ 0.
 */
function parseExposition(text: string): { series: Series[]; types: Map<string, string> } {
  if (!text.endsWith("\n")) throw new Error("the exposition must end with a newline");
  const types = new Map<string, string>();
  const helped = new Set<string>();
  const seen = new Set<string>();
  const series: Series[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    if (line.startsWith("#")) {
      const m = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
      if (!m) {
        if (/^# (HELP|TYPE)\b/.test(line)) throw new Error(`malformed ${line}`);
        continue; // a comment
      }
      const [, kind, name, rest] = m;
      if (!NAME.test(name!)) throw new Error(`bad metric name: ${line}`);
      if (kind === "TYPE") {
        if (types.has(name!) || !TYPES.has(rest!)) throw new Error(`repeated or unknown TYPE: ${line}`);
        if (series.some((s) => familyOf(s.name, types) === name)) throw new Error(`TYPE after samples: ${line}`);
        types.set(name!, rest!);
      } else {
        if (helped.has(name!)) throw new Error(`repeated HELP: ${line}`);
        helped.add(name!);
      }
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: (-?\d+))?$/.exec(line);
    if (!m) throw new Error(`malformed sample: ${line}`);
    const [, name, labelText, value] = m;
    const labels = labelText ? parseLabels(labelText, line) : {};
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seen.has(key)) throw new Error(`repeated series: ${line}`);
    seen.add(key);
    const family = familyOf(name!, types);
    if (!types.has(family)) throw new Error(`sample of an undeclared family: ${line}`);
    const v = parseValue(value!, line);
    if (types.get(family) === "counter" && !(v >= 0)) throw new Error(`negative counter: ${line}`);
    series.push({ name: name!, labels, value: v });
  }
  for (const [family, type] of types) {
    if (type !== "histogram") continue;
    const groups = new Map<string, Series[]>();
    for (const s of series.filter((x) => x.name === `${family}_bucket`)) {
      const { le, ...rest } = s.labels;
      if (le === undefined) throw new Error(`${family}_bucket without le`);
      const key = JSON.stringify(Object.entries(rest).sort());
      groups.set(key, [...(groups.get(key) ?? []), s]);
    }
    for (const [key, buckets] of groups) {
      const ordered = buckets.map((b) => ({ le: parseValue(b.labels.le!, family), v: b.value })).sort((a, b) => a.le - b.le);
      if (ordered.at(-1)!.le !== Number.POSITIVE_INFINITY) throw new Error(`${family}${key}: no +Inf bucket`);
      for (let i = 1; i < ordered.length; i++)
        if (ordered[i]!.v < ordered[i - 1]!.v) throw new Error(`${family}${key}: buckets not cumulative`);
      const count = series.find((s) => s.name === `${family}_count` && JSON.stringify(Object.entries(s.labels).sort()) === key);
      if (!count || count.value !== ordered.at(-1)!.v) throw new Error(`${family}${key}: _count differs from the +Inf bucket`);
    }
  }
  return { series, types };
}

/** The family a sample belongs to: itself, or a histogram's / summary's for _bucket, _sum, _count. */
function familyOf(name: string, types: Map<string, string>): string {
  if (types.has(name)) return name;
  const base = name.replace(/_(bucket|sum|count)$/, "");
  return types.has(base) ? base : name;
}

const httpOf = (url: string): string => url.replace(/^ws/, "http");

async function scrape(url: string, token?: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${httpOf(url)}/metrics`, { headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...headers } });
}

/** The series' identities (name and labels), to compare the set of two scrapes. */
const identities = (series: Series[]): string[] => series.map((s) => `${s.name}${JSON.stringify(Object.entries(s.labels).sort())}`).sort();

async function firstSample(client: TestClient): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if ((await client.ok("state.metrics", { limit: 1 })).samples.length) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("no sample");
}

/** The series a Grafana board reads (README: Metrics); each must be in every scrape. */
const LISTED = [
  "hotline_build_info",
  "hotline_requests_total",
  "hotline_request_duration_seconds_bucket",
  "hotline_request_duration_seconds_count",
  "hotline_connections",
  "hotline_jobs",
  "hotline_jobs_running",
  "hotline_jobs_finished_total",
  "hotline_job_duration_seconds_bucket",
  "hotline_job_output_written_bytes_total",
  "hotline_job_output_read_bytes_total",
  "hotline_job_output_kept_bytes",
  "hotline_event_loop_delay_p99_seconds",
  "hotline_event_loop_stalls_total",
  "hotline_tokens",
  "hotline_ssh_connections",
  "hotline_preview_requests_total",
  "hotline_cpu_used_cores",
  "hotline_cpu_cores",
  "hotline_memory_used_bytes",
  "hotline_memory_cache_bytes",
  "hotline_memory_limit_bytes",
  "hotline_daemon_rss_bytes",
  "hotline_daemon_cpu_seconds_total",
  "hotline_disk_used_bytes",
  "hotline_disk_free_bytes",
  "hotline_processes",
  "hotline_jobs_memory_bytes",
  "hotline_job_cpu_seconds_total",
  "hotline_metrics_sampling_seconds_total",
];

describe("GET /metrics", { timeout: 300_000 }, () => {
  const ctx = useDaemon({ args: ["--metrics-interval-ms", "250"] });

  it("is the Prometheus text format, strictly, with the listed series, for an observe token", async () => {
    const { token } = await ctx.client.ok("tokens.create", { scope: "observe", ttlMs: 600_000 });
    const { job } = await ctx.client.ok("shell", { command: "echo out; echo err >&2", wait: 30_000 });
    await ctx.client.ok("jobs.output", { job: job.id });
    await firstSample(ctx.client);
    const res = await scrape(ctx.daemon.url, token);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const { series, types } = parseExposition(await res.text());
    const names = new Set(series.map((s) => s.name));
    expect(LISTED.filter((n) => !names.has(n))).toEqual([]);
    const one = (name: string, labels: Record<string, string> = {}) =>
      series.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
    expect(one("hotline_requests_total", { action: "shell", outcome: "ok" })).toBe(1);
    expect(one("hotline_request_duration_seconds_count", { action: "shell" })).toBe(1);
    expect(one("hotline_jobs", { kind: "shell", state: "succeeded" })).toBe(1);
    expect(one("hotline_jobs_finished_total", { kind: "shell", state: "succeeded" })).toBe(1);
    expect(one("hotline_job_output_written_bytes_total")).toBe(8);
    expect(one("hotline_job_output_read_bytes_total")).toBeGreaterThanOrEqual(8);
    expect(one("hotline_tokens", { scope: "observe", use: "api" })).toBe(1);
    expect(one("hotline_connections")).toBeGreaterThanOrEqual(0); // counted every 10 s: state.metrics' test waits for this one's
    expect(one("hotline_cpu_cores")).toBeGreaterThan(0);
    expect(one("hotline_disk_free_bytes", { disk: "state" })).toBeGreaterThan(0);
    expect(types.get("hotline_request_duration_seconds")).toBe("histogram");
    // A bad request counts under its code; an action nobody has is "unknown", never the client's string.
    await ctx.client.call("jobs.status", { job: "nope" });
    await ctx.client.call("no.such.action", {});
    await new Promise((r) => setTimeout(r, 1100)); // past the one-second cache of renderings
    const again = parseExposition(await (await scrape(ctx.daemon.url, token)).text()).series;
    const outcomes = again.filter((s) => s.name === "hotline_requests_total").map((s) => `${s.labels.action} ${s.labels.outcome}`);
    expect(outcomes).toEqual(expect.arrayContaining(["jobs.status not_found", "unknown unknown_action"]));
    expect(outcomes.some((o) => o.includes("no.such"))).toBe(false);
  });

  it("refuses no token (401), a wrong one (401), a browser link's token (403), a foreign Origin (403), and anything but GET", async () => {
    const none = await scrape(ctx.daemon.url);
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ ok: false, error: { code: "unauthorized" } });
    expect((await scrape(ctx.daemon.url, "hl_wrong")).status).toBe(401);
    const link = await ctx.client.ok("console.open", {});
    const linkToken = new URLSearchParams(new URL(link.consoleUrl).hash.slice(1)).get("token")!;
    const linkOnly = await scrape(ctx.daemon.url, linkToken);
    expect(linkOnly.status).toBe(403);
    expect(await linkOnly.json()).toMatchObject({ error: { code: "forbidden" } });
    const foreign = await scrape(ctx.daemon.url, ctx.daemon.token, { Origin: "http://evil.example" });
    expect(foreign.status).toBe(403);
    const post = await fetch(`${httpOf(ctx.daemon.url)}/metrics`, {
      method: "POST",
      headers: { Authorization: `Bearer ${ctx.daemon.token}` },
    });
    expect(post.status).toBe(405);
    const manage = await scrape(ctx.daemon.url, ctx.daemon.token);
    expect(manage.status).toBe(200);
  });

  it("has as many series after 1,000 more jobs as before them (no job id, path or client string in a label)", async () => {
    const run = (n: number) => Promise.all(Array.from({ length: n }, () => ctx.client.ok("shell", { command: ["true"], wait: 60_000 })));
    await run(3);
    await new Promise((r) => setTimeout(r, 1100));
    const before = parseExposition(await (await scrape(ctx.daemon.url, ctx.daemon.token)).text()).series;
    for (let i = 0; i < 20; i++) await run(50);
    await new Promise((r) => setTimeout(r, 1100));
    const after = parseExposition(await (await scrape(ctx.daemon.url, ctx.daemon.token)).text()).series;
    expect(identities(after)).toEqual(identities(before));
    const shells = (series: Series[]) => series.find((s) => s.name === "hotline_jobs_finished_total" && s.labels.kind === "shell")!.value;
    expect(shells(after) - shells(before)).toBe(1000);
    for (const s of after) {
      for (const value of Object.values(s.labels)) {
        expect(value).not.toMatch(/^j[0-9a-z]{6,40}$/);
        expect(value.startsWith("/")).toBe(false);
      }
    }
  });

  it("takes a flood of scrapes: every one answered, one rendering a second, the daemon serving on", async () => {
    // Two waves of 200 at once (the daemon closes the oldest of more than 256 sockets not yet authorised).
    const wave = () =>
      Promise.all(
        Array.from({ length: 200 }, () =>
          scrape(ctx.daemon.url, ctx.daemon.token).then(async (r) => ({ status: r.status, body: await r.text() })),
        ),
      );
    const replies = [...(await wave()), ...(await wave())];
    expect(replies.filter((r) => r.status !== 200)).toEqual([]);
    expect(new Set(replies.map((r) => r.body)).size).toBeLessThanOrEqual(Math.max(2, replies.length / 50));
    parseExposition(replies[0]!.body);
    const info: Frame = await ctx.client.ok("state.info");
    expect(info.eventLoop.stalls, JSON.stringify(info.eventLoop)).toBe(0);
  });
});
