import type { JobStatus } from "../../protocol/common.js";
import type { ResultFor } from "../../protocol/index.js";
import type { Command } from "../command.js";
import { displayText } from "../display.js";

/** Between two screens. */
const REFRESH_MS = 2000;
type Order = "cpu" | "memory";
type Sample = ResultFor<"state.metrics">["samples"][number];

/** "812 KiB", "1.4 GiB". */
export function bytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  for (; n >= 1024 && i < units.length - 1; i++) n /= 1024;
  return `${n >= 100 || i === 0 ? n.toFixed(0) : n.toFixed(1)} ${units[i]}`;
}

/** One job's row as top shows it: its share of a core since the last screen (or since it started), memory, processes. */
interface Row {
  job: JobStatus;
  percent: number;
}

/**
 * Each running job's CPU share: the CPU time it gained since the previous screen over the time
 * between them (the first screen: since the job started), in percent of one core.
 */
export function rowsOf(jobs: JobStatus[], previous: Map<string, { cpuMs: number; at: number }>, now: number): Row[] {
  return jobs.map((job) => {
    const cpuMs = job.usage?.cpuMs ?? 0;
    const before = previous.get(job.id) ?? { cpuMs: 0, at: job.startedAt ? Date.parse(job.startedAt) : now };
    const percent = now > before.at ? (100 * Math.max(0, cpuMs - before.cpuMs)) / (now - before.at) : 0;
    return { job, percent };
  });
}

/** The screen: a summary line of the sandbox, a header, one line per job (most CPU or memory first), cut to `width` × `height`. */
export function screen(rows: Row[], sample: Sample | undefined, order: Order, width: number, height: number, at = new Date()): string {
  const sorted = [...rows].sort((a, b) =>
    order === "cpu" ? b.percent - a.percent : (b.job.usage?.rssBytes ?? 0) - (a.job.usage?.rssBytes ?? 0),
  );
  const time = at.toTimeString().slice(0, 8);
  const sandbox = sample
    ? ` · CPU ${Math.round((100 * sample.cpu.usedCores) / Math.max(sample.cpu.cores, 0.001))}% of ${sample.cpu.cores} cores · memory ${bytes(sample.memory.usedBytes)} of ${bytes(sample.memory.limitBytes)} (+${bytes(sample.memory.cacheBytes)} cache)`
    : "";
  const lines = [
    `hotline top ${time}${sandbox} · ${rows.length} running · by ${order === "cpu" ? "CPU" : "memory"} (c/m: sort, q: quit)`,
    "",
  ];
  const table = sorted.map(({ job, percent }) => [
    job.id,
    percent.toFixed(0),
    `${((job.usage?.cpuMs ?? 0) / 1000).toFixed(1)}s`,
    job.usage ? bytes(job.usage.rssBytes) : "-",
    job.usage ? bytes(job.usage.peakRssBytes) : "-",
    job.usage ? String(job.usage.processes) : "-",
    displayText(job.kind),
    displayText(job.title),
  ]);
  const header = ["JOB", "CPU%", "CPU", "MEM", "PEAK", "PROCS", "KIND", "TITLE"];
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((r) => r[i]!.length)));
  const right = new Set([1, 2, 3, 4, 5]);
  const line = (r: string[]): string =>
    r.map((c, i) => (i === r.length - 1 ? c : right.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join("  ");
  lines.push(line(header), ...table.map(line));
  if (rows.length === 0) lines.push("(no job is running)");
  return lines
    .slice(0, Math.max(3, height - 1))
    .map((l) => (l.length > width ? `${l.slice(0, Math.max(0, width - 1))}…` : l))
    .join("\n");
}

/**
 * `hotline top [cpu|memory]`: the running jobs by CPU or memory, refreshed every 2 s like top(1),
 * on one screen (the terminal's alternate screen, restored on exit); `c` and `m` change the order,
 * `q` or Ctrl-C quits. Not on a terminal (or with --once): one screen, printed, and done.
 */
const top: Command = async ({ client, args, flags, tty }) => {
  let order: Order = (typeof flags.sort === "string" ? flags.sort : (args[0] ?? "cpu")) === "memory" ? "memory" : "cpu";
  const wanted = typeof flags.sort === "string" ? flags.sort : args[0];
  if (wanted !== undefined && wanted !== "cpu" && wanted !== "memory") throw new Error(`top ${wanted}: expected cpu or memory`);
  const previous = new Map<string, { cpuMs: number; at: number }>();
  const draw = async (): Promise<string> => {
    const [{ jobs }, metrics] = await Promise.all([
      client.request("jobs.list", { state: "running", limit: 1000 }),
      client.request("state.metrics", { limit: 1 }),
    ]);
    const now = Date.now();
    const rows = rowsOf(jobs, previous, now);
    previous.clear();
    for (const job of jobs) previous.set(job.id, { cpuMs: job.usage?.cpuMs ?? 0, at: now });
    return screen(rows, metrics.samples.at(-1), order, process.stdout.columns || 120, process.stdout.rows || 40);
  };
  const interactive = tty && process.stdin.isTTY === true && flags.once !== true;
  if (!interactive) {
    process.stdout.write(`${await draw()}\n`);
    return 0;
  }
  const out = process.stdout;
  out.write("\x1b[?1049h\x1b[?25l"); // the alternate screen, no cursor
  process.stdin.setRawMode(true);
  process.stdin.resume();
  let timer: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      let drawing = false;
      let again = false;
      const refresh = (): void => {
        clearTimeout(timer);
        if (drawing) return void (again = true); // a key pressed while a screen is on its way: one more after it
        drawing = true;
        draw().then((text) => {
          drawing = false;
          out.write(`\x1b[H\x1b[2J${text}`);
          if (again) {
            again = false;
            return refresh();
          }
          timer = setTimeout(refresh, REFRESH_MS);
        }, reject);
      };
      process.stdin.on("data", (key: Buffer) => {
        const k = key.toString();
        if (k === "q" || k === "Q" || k === "\x03") resolve();
        else if (k === "c" || k === "m") {
          order = k === "c" ? "cpu" : "memory";
          refresh();
        }
      });
      out.on("resize", refresh);
      refresh();
    });
  } finally {
    clearTimeout(timer);
    process.stdin.setRawMode(false);
    process.stdin.pause();
    out.write("\x1b[?25h\x1b[?1049l");
  }
  return 0;
};

export const topCommands: Record<string, Command> = { top };
