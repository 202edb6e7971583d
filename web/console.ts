// The operator console: every job, newest first, kept live by jobs.watch events (no polling);
// a click follows a job's output in xterm.js; cancel for manage links; copy the whole output.
// Above the list, the sandbox's CPU, memory and disk over the window (state.metrics) as sparklines;
// in it, each process job's CPU and memory (its usage, read again every few seconds while it runs).
import { Terminal } from "@xterm/xterm";
import { FitAddon } from "@xterm/addon-fit";
import type { JobStatus } from "../protocol/common.js";
import type { ResultFor } from "../protocol/index.js";
import type { LinkConnection } from "../client/link-connection.js";
import { checkLink, decodeOutput, keepConnected, readLink, showLinkRefused } from "./link.js";
import { showFigures } from "./code-figures.js";

const TAIL_BYTES = 64 * 1024;
/** The listening ports are read again this often (they have no event of their own). */
const PORTS_EVERY_MS = 3000;
/** Running jobs' usage changes without an event: read again this often. */
const USAGE_EVERY_MS = 2000;
type Sample = ResultFor<"state.metrics">["samples"][number];
/** The sandbox's samples over the window, oldest first (state.metrics, then only the new ones). */
const samples: Sample[] = [];
const metricsView = { intervalMs: 2000, windowMs: 3_600_000, enabled: true };
/** Each running job's last CPU figure and when it came, for its CPU share since. */
const cpuSeen = new Map<string, { cpuMs: number; at: number; percent?: number }>();
const jobs = new Map<string, JobStatus>();
const rows = new Map<string, HTMLTableRowElement>();
const list = document.getElementById("jobs")!;
const status = document.getElementById("status")!;
const panel = document.getElementById("output-panel")!;
const term = new Terminal({ scrollback: 50_000, convertEol: true, disableStdin: true, fontFamily: "monospace" });
const fit = new FitAddon();
term.loadAddon(fit);
term.open(document.getElementById("output")!);

const state: {
  conn?: LinkConnection;
  scope?: "manage" | "observe";
  selected?: string;
  term: Terminal;
  jobs: Map<string, JobStatus>;
  samples: Sample[];
} = {
  term,
  jobs,
  samples,
};
(window as unknown as { hotline: typeof state }).hotline = state;

function say(text: string): void {
  status.textContent = text;
}

function duration(job: JobStatus): string {
  if (!job.startedAt) return "";
  const ms = (job.endedAt ? Date.parse(job.endedAt) : Date.now()) - Date.parse(job.startedAt);
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m ${s % 60}s` : `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

/** "812 KiB", "1.4 GiB". */
function bytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  for (; n >= 1024 && i < units.length - 1; i++) n /= 1024;
  return `${n >= 100 || i === 0 ? n.toFixed(0) : n.toFixed(1)} ${units[i]}`;
}

/** A job's CPU: its time, and while it runs its share of a core since the last figure. */
function cpuText(job: JobStatus): string {
  const usage = job.usage;
  if (!usage) return "";
  const seconds = `${(usage.cpuMs / 1000).toFixed(1)} s`;
  const seen = cpuSeen.get(job.id);
  if (job.state !== "running") return seconds;
  const now = Date.now();
  if (!seen || usage.cpuMs !== seen.cpuMs) {
    const percent = seen && now > seen.at ? (100 * (usage.cpuMs - seen.cpuMs)) / (now - seen.at) : undefined;
    cpuSeen.set(job.id, { cpuMs: usage.cpuMs, at: now, percent: percent ?? seen?.percent });
  }
  const percent = cpuSeen.get(job.id)?.percent;
  return percent === undefined ? seconds : `${seconds} · ${Math.max(0, Math.round(percent))}%`;
}

/** A job's memory: resident now while it runs (the peak in the cell's title), its peak once it ended. */
function memoryText(job: JobStatus): string {
  const usage = job.usage;
  if (!usage) return "";
  return job.state === "running" ? bytes(usage.rssBytes) : `peak ${bytes(usage.peakRssBytes)}`;
}

function cell(row: HTMLTableRowElement, name: string): HTMLTableCellElement {
  return row.querySelector(`td.${name}`)!;
}

function render(job: JobStatus): void {
  let row = rows.get(job.id);
  if (!row) {
    row = document.createElement("tr");
    row.dataset.job = job.id;
    for (const name of ["state", "kind", "title", "progress", "duration", "cpu", "memory"]) {
      const td = document.createElement("td");
      td.className = name;
      row.append(td);
    }
    const bar = document.createElement("progress");
    cell(row, "progress").append(bar);
    row.addEventListener("click", () => select(job.id));
    rows.set(job.id, row);
    // Newest first: job ids sort by creation time.
    const after = [...rows.keys()]
      .filter((id) => id > job.id)
      .sort()
      .pop();
    const before = after === undefined ? list.firstChild : rows.get(after)!.nextSibling;
    list.insertBefore(row, before);
  }
  row.dataset.state = job.state;
  cell(row, "state").textContent = job.state;
  cell(row, "kind").textContent = job.kind;
  cell(row, "title").textContent = job.title;
  const bar = cell(row, "progress").querySelector("progress")!;
  const p = job.progress;
  bar.hidden = !p;
  if (p?.total) {
    bar.max = p.total;
    bar.value = Math.min(p.done, p.total);
  } else bar.removeAttribute("value");
  cell(row, "duration").textContent = duration(job);
  cell(row, "cpu").textContent = cpuText(job);
  cell(row, "memory").textContent = memoryText(job);
  cell(row, "memory").title = job.usage ? `peak ${bytes(job.usage.peakRssBytes)}, ${job.usage.processes} processes` : "";
  if (job.id === state.selected) showSelected(job);
}

function upsert(job: JobStatus): void {
  // A state event carries the status of its moment; a usage read later may be newer.
  const known = jobs.get(job.id);
  if (!job.usage && known?.usage) job = { ...job, usage: known.usage };
  jobs.set(job.id, job);
  if (job.state !== "running") cpuSeen.delete(job.id);
  render(job);
}

/** Draws one sparkline: `values` from 0 to 1 at their times, across the span the samples cover. */
function sparkline(id: string, points: Array<{ at: number; value: number }>, label: string): void {
  const figure = document.getElementById(id)!;
  figure.querySelector(".value")!.textContent = label;
  const line = figure.querySelector("polyline")!;
  figure.dataset.points = String(points.length);
  if (points.length === 0) return line.setAttribute("points", "");
  const last = points.at(-1)!.at;
  const span = Math.max(last - points[0]!.at, metricsView.intervalMs);
  const xy = points.map((p) => {
    const x = 240 - ((last - p.at) / span) * 240;
    const y = 39 - Math.min(1, Math.max(0, p.value)) * 38;
    return `${x.toFixed(1)},${y.toFixed(1)}`;
  });
  // One sample is a point: draw it as a short level line.
  line.setAttribute("points", xy.length === 1 ? `0,${xy[0]!.split(",")[1]} ${xy[0]}` : xy.join(" "));
}

/** The panel: CPU of the sandbox's cores, memory of its limit (page cache apart), the fullest disk. */
function drawMetrics(): void {
  const panel = document.getElementById("metrics-panel")!;
  panel.hidden = !metricsView.enabled || samples.length === 0;
  const last = samples.at(-1);
  if (!last) return;
  sparkline(
    "spark-cpu",
    samples.map((s) => ({ at: s.at, value: s.cpu.cores > 0 ? s.cpu.usedCores / s.cpu.cores : 0 })),
    `${Math.round((100 * last.cpu.usedCores) / Math.max(last.cpu.cores, 0.001))}% of ${last.cpu.cores} cores`,
  );
  sparkline(
    "spark-memory",
    samples.map((s) => ({ at: s.at, value: s.memory.limitBytes > 0 ? s.memory.usedBytes / s.memory.limitBytes : 0 })),
    `${bytes(last.memory.usedBytes)} of ${bytes(last.memory.limitBytes)} (+${bytes(last.memory.cacheBytes)} cache)`,
  );
  const fullest = (s: Sample) =>
    s.disks.reduce<{ name: string; used: number; total: number } | undefined>((worst, d) => {
      const total = d.usedBytes + d.freeBytes;
      return !worst || (total > 0 && d.usedBytes / total > worst.used / Math.max(worst.total, 1))
        ? { name: d.name, used: d.usedBytes, total }
        : worst;
    }, undefined);
  const disk = fullest(last);
  sparkline(
    "spark-disk",
    samples.map((s) => {
      const d = fullest(s);
      return { at: s.at, value: d && d.total > 0 ? d.used / d.total : 0 };
    }),
    disk ? `${Math.round((100 * disk.used) / Math.max(disk.total, 1))}% of ${bytes(disk.total)} (${disk.name})` : "",
  );
}

/** The samples since the last one shown (all of the window the first time), then the panel again. */
async function pollMetrics(): Promise<void> {
  const conn = state.conn;
  if (!conn) return;
  const since = samples.at(-1)?.at;
  const reply = await conn.request("state.metrics", since === undefined ? { limit: 3600 } : { sinceMs: since, limit: 3600 });
  Object.assign(metricsView, { intervalMs: reply.intervalMs, windowMs: reply.windowMs, enabled: reply.enabled });
  samples.push(...reply.samples);
  const oldest = (samples.at(-1)?.at ?? 0) - reply.windowMs;
  while (samples.length > 0 && samples[0]!.at <= oldest) samples.shift();
  drawMetrics();
}

/** Running jobs' usage (CPU, memory) moves without events: read it again. */
async function pollUsage(): Promise<void> {
  const conn = state.conn;
  if (!conn) return;
  const { jobs: running } = await conn.request("jobs.list", { state: "running", limit: 1000 });
  for (const job of running) upsert(job);
}

function showSelected(job: JobStatus): void {
  document.getElementById("selected-title")!.textContent = `${job.id} · ${job.kind} · ${job.state} · ${job.title}`;
  (document.getElementById("cancel") as HTMLButtonElement).hidden = state.scope !== "manage" || !["queued", "running"].includes(job.state);
  if (job.kind !== "code" || job.endedAt) void showFigures(state.conn, job, panel).catch((err: Error) => say(`figures: ${err.message}`));
}

/** Follows the selected job's output from `from` (0: the start) into the panel's terminal. */
async function follow(id: string, from: number): Promise<void> {
  const conn = state.conn;
  if (!conn) return;
  if (state.selected) await conn.request("jobs.unfollow", { job: state.selected }).catch(() => {});
  state.selected = id;
  term.reset();
  panel.hidden = false;
  fit.fit();
  for (const r of rows.values()) r.classList.toggle("selected", r.dataset.job === id);
  showSelected(jobs.get(id)!);
  await conn.request("jobs.follow", { job: id, from }).catch((err: Error) => say(`cannot follow ${id}: ${err.message}`));
}

function select(id: string): void {
  void follow(id, 0);
}

async function copyOutput(): Promise<void> {
  const conn = state.conn;
  const id = state.selected;
  if (!conn || !id) return;
  const parts: Uint8Array[] = [];
  for (let from = 0; ; ) {
    const page = await conn.request("jobs.output", { job: id, from });
    parts.push(decodeOutput(page.data, page.encoding));
    if (page.eof || page.next === from) break;
    from = page.next;
  }
  const text = new TextDecoder().decode(new Uint8Array(await new Blob(parts as BlobPart[]).arrayBuffer()));
  try {
    await navigator.clipboard.writeText(text);
    say(`copied ${text.length} characters of ${id}`);
  } catch {
    say("the browser refused the clipboard; select the output instead");
  }
}

/** The ports table: each listener, and for manage links a button that asks preview.open and shows the link. */
async function showPorts(): Promise<void> {
  const conn = state.conn;
  if (!conn) return;
  const { ports } = await conn.request("ports.list", {});
  const body = document.getElementById("ports")!;
  const seen = new Set<string>();
  for (const p of ports) {
    const key = `${p.port}/${p.address}`;
    seen.add(key);
    let row = body.querySelector<HTMLTableRowElement>(`tr[data-key="${key}"]`);
    if (!row) {
      row = document.createElement("tr");
      row.dataset.key = key;
      for (const text of [String(p.port), p.address, p.job ?? "", p.command ?? ""]) row.insertCell().textContent = text;
      const action = row.insertCell();
      if (state.scope === "manage") {
        const button = document.createElement("button");
        button.type = "button";
        button.textContent = "preview";
        button.addEventListener("click", () => void openPreview(p.port, action));
        action.append(button);
      }
      body.append(row);
    }
  }
  for (const row of [...body.querySelectorAll<HTMLTableRowElement>("tr")]) if (!seen.has(row.dataset.key ?? "")) row.remove();
}

async function openPreview(port: number, cell: HTMLTableCellElement): Promise<void> {
  const opened = await state.conn?.request("preview.open", { port }).catch((err: Error) => say(`preview refused: ${err.message}`));
  if (!opened) return;
  if (!opened.available) return say(`no preview here: ${opened.reason}`);
  const a = document.createElement("a");
  a.href = opened.url;
  a.target = "_blank";
  a.rel = "noopener noreferrer";
  a.textContent = "open preview";
  a.title = `expires ${opened.expiresAt}`;
  cell.replaceChildren(a);
}

/** One connection's work: the live job list, and the selected job's output again after a reconnect. */
async function watch(conn: LinkConnection): Promise<void> {
  state.conn = conn;
  conn.onClose(() => (state.conn = undefined));
  conn.onEvent((event) => {
    if (event.event === "job.created") upsert(event.status);
    else if (event.event === "job.state" && event.status) upsert(event.status);
    else if (event.event === "job.progress") {
      const job = jobs.get(event.job);
      if (job) upsert({ ...job, progress: event.progress });
    } else if (event.event === "job.output" && event.job === state.selected) term.write(decodeOutput(event.data, event.encoding));
    else if (event.event === "job.exit" && event.job === state.selected) upsert(event.status);
  });
  const snapshot = await conn.request("jobs.watch", { limit: 200 }).catch(() => undefined);
  if (!snapshot) return;
  for (const job of [...snapshot.jobs].reverse()) upsert(job);
  say(`${state.scope} link · live`);
  if (state.selected) void follow(state.selected, 0);
  void showPorts().catch(() => {});
  void pollMetrics().catch(() => {});
}

const link = readLink();
if (!link) showLinkRefused("console", "this address carries no console link");
else {
  void (async () => {
    const check = await checkLink(link);
    if (check.state === "refused") return showLinkRefused("console", check.message);
    if (check.state === "valid") state.scope = check.scope;
    document.body.dataset.scope = state.scope ?? "";
    document.getElementById("from-start")!.addEventListener("click", () => state.selected && void follow(state.selected, 0));
    document.getElementById("from-tail")!.addEventListener("click", () => {
      const job = state.selected ? jobs.get(state.selected) : undefined;
      if (job) void follow(job.id, Math.max(0, job.outputBytes - TAIL_BYTES));
    });
    document
      .getElementById("copy")!
      .addEventListener("click", () => void copyOutput().catch((err: Error) => say(`copy failed: ${err.message}`)));
    document.getElementById("cancel")!.addEventListener("click", () => {
      const id = state.selected;
      if (id)
        state.conn?.request("jobs.cancel", { job: id, wait: 5000 }).then(upsert, (err: Error) => say(`cancel refused: ${err.message}`));
    });
    window.addEventListener("resize", () => fit.fit());
    // Durations of running jobs tick locally; the job list itself changes only on events.
    setInterval(() => jobs.forEach((job) => job.state === "running" && render(job)), 1000);
    setInterval(() => void showPorts().catch(() => {}), PORTS_EVERY_MS);
    setInterval(() => void pollUsage().catch(() => {}), USAGE_EVERY_MS);
    // The samples come every intervalMs (the daemon's); asking at that pace gets each one once.
    const metricsLoop = (): void =>
      void pollMetrics()
        .catch(() => {})
        .finally(() => setTimeout(metricsLoop, metricsView.intervalMs));
    setTimeout(metricsLoop, metricsView.intervalMs);
    await keepConnected(link, "console", say, watch);
  })();
}
