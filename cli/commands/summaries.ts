import type { JobStatus } from "../../protocol/common.js";

/** Human summaries of state.info, state.catalog and jobs.list (what --json prints in full). */

type Row = Record<string, unknown>;

/** "3h 02m", "4m 05s", "12.3s", "850ms". */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.floor(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
  return `${Math.floor(s / 86_400)}d ${String(Math.floor((s % 86_400) / 3600)).padStart(2, "0")}h`;
}

/** Aligned "key  value" lines under an optional heading. */
function table(rows: Array<[string, string]>, indent = "  "): string {
  const width = Math.max(0, ...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${indent}${k.padEnd(width)}  ${v}`).join("\n");
}

export function infoSummary(info: Row): string {
  const nix = info.nix as Row;
  const counts = info.jobs as Record<string, number>;
  const byState = Object.entries(counts)
    .filter(([k]) => k !== "total")
    .map(([k, v]) => `${v} ${k}`)
    .join(", ");
  const dirs = info.directories as Record<string, string>;
  return [
    `hotline ${String(info.version)} (commit ${String(info.commit).slice(0, 12)}, protocol ${String(info.protocolVersion)})`,
    `pid ${String(info.pid)} as ${String(info.user)}, up ${duration(Number(info.uptimeMs))} since ${String(info.startedAt)}; idle ${duration(Number(info.idleMs))}`,
    `node ${String(info.node)} on ${String(info.system)}`,
    `nix: ${nix.available ? `available${nix.version ? ` (${String(nix.version)})` : ""}` : `unavailable — ${String(nix.reason ?? "")}`}`,
    `jobs: ${counts.total ?? 0}${byState ? ` (${byState})` : ""}`,
    `this token: ${String(info.scope)}; ${(info.actions as unknown[]).length} actions (hotline state info --json lists them)`,
    "directories:",
    table(Object.entries(dirs)),
  ].join("\n");
}

export function catalogSummary(catalog: Row): string {
  const pin = catalog.nixpkgs as Row;
  const lines = [
    `system ${String(catalog.system)}`,
    `nixpkgs ${String(pin.url)}${pin.lastModified ? ` (last modified ${new Date(Number(pin.lastModified) * 1000).toISOString().slice(0, 10)})` : ""}`,
  ];
  const inputs = catalog.inputs as Row[];
  if (inputs.length > 0) lines.push("inputs:", table(inputs.map((i) => [String(i.name ?? "?"), String(i.url ?? JSON.stringify(i))])));
  const workspaces = catalog.workspaces as Row[];
  lines.push(workspaces.length === 0 ? "no workspaces prepared yet" : `workspaces prepared (${workspaces.length}):`);
  for (const w of workspaces) {
    const { workspace, ...rest } = w;
    const detail = Object.entries(rest)
      .map(([k, v]) => `${k} ${typeof v === "string" ? v : JSON.stringify(v)}`)
      .join("; ");
    lines.push(`  ${String(workspace ?? "?")}${detail ? `  ${detail}` : ""}`);
  }
  return lines.join("\n");
}

/** "12 MiB", "1.4 GiB": memory in the jobs table. */
function mib(n: number): string {
  return n >= 1024 ** 3 ? `${(n / 1024 ** 3).toFixed(1)}G` : `${(n / 1024 ** 2).toFixed(n >= 100 * 1024 ** 2 ? 0 : 1)}M`;
}

/** "ID  STATE  KIND  STARTED  DURATION  EXIT  CPU  PEAK  TITLE" with one row per job; "no jobs" for none. */
export function jobsTable(jobs: JobStatus[], more: boolean, now = Date.now()): string {
  if (jobs.length === 0) return "no jobs";
  const rows = jobs.map((job) => {
    const started = job.startedAt ?? job.createdAt;
    const end = job.endedAt ? Date.parse(job.endedAt) : now;
    const took = job.startedAt ? duration(end - Date.parse(job.startedAt)) + (job.endedAt ? "" : "…") : "-";
    const code = job.exitCode !== undefined ? String(job.exitCode) : (job.signal ?? "");
    const cpu = job.usage ? `${(job.usage.cpuMs / 1000).toFixed(1)}s` : "";
    const peak = job.usage ? mib(job.usage.peakRssBytes) : "";
    return [job.id, job.state, job.kind, localTime(started), took, code, cpu, peak, job.title];
  });
  const header = ["ID", "STATE", "KIND", "STARTED", "DURATION", "EXIT", "CPU", "PEAK", "TITLE"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]): string => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ");
  return [line(header), ...rows.map(line), ...(more ? ["… more: raise --limit"] : [])].join("\n");
}

/** "2026-11-30 11:40:49" in this machine's time zone. */
function localTime(iso: string): string {
  const d = new Date(iso);
  const p = (n: number): string => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}
