import os from "node:os";
import type { BenchRow } from "./common.js";
import { coreBenchmarks } from "./core.js";
import { desktopBenchmarks } from "./desktop.js";
import { extractBenchmarks } from "./extract.js";
import { downloadBenchmarks, filesBenchmarks } from "./files.js";
import { fsBenchmarks } from "./fs.js";
import { benchPrepare } from "./prepare.js";
import { pythonBenchmarks } from "./python.js";
import { scaleBenchmarks } from "./scale.js";
import { sshBenchmarks } from "./ssh.js";
import { previewBenchmarks } from "./preview.js";
import { startupBenchmarks } from "./startup.js";
import { metricsBenchmarks } from "./metrics.js";
import { sessionsBenchmarks } from "./sessions.js";
import { codeBenchmarks } from "./code.js";

/** `npm run bench`: every benchmark, then one table of medians and ratios. */
async function main(): Promise<void> {
  const rows: BenchRow[] = [];
  const suites: Array<[string, () => Promise<BenchRow[]>]> = [
    ["core", () => coreBenchmarks()],
    ["core-latency", () => coreBenchmarks(true)],
    ["prepare", () => benchPrepare()],
    ["files", () => filesBenchmarks()],
    ["download", () => downloadBenchmarks()],
    ["extract", () => extractBenchmarks()],
    ["scale", () => scaleBenchmarks()],
    ["fs", () => fsBenchmarks()],
    ["python", () => pythonBenchmarks()],
    ["ssh", () => sshBenchmarks()],
    ["preview", () => previewBenchmarks()],
    ["desktop", () => desktopBenchmarks()],
    ["startup", () => startupBenchmarks()],
    ["metrics", () => metricsBenchmarks()],
    ["sessions", () => sessionsBenchmarks()],
    ["code", () => codeBenchmarks()],
  ];
  const only = process.argv[2];
  for (const [name, run] of suites) {
    // "download" is a part of "files", "core-latency" of "core": each runs alone on request.
    if (only ? only !== name : name === "download" || name === "core-latency") continue;
    process.stderr.write(`bench: ${name} …\n`);
    try {
      rows.push(...(await run()));
    } catch (err) {
      process.stderr.write(`bench: ${name} failed: ${(err as Error).stack}\n`);
      process.exitCode = 1;
    }
  }
  const fmt = (n: number): string => (Math.abs(n) >= 100 ? n.toFixed(0) : n.toFixed(3));
  const lines = [
    "| benchmark | value | baseline | unit | ratio (median) | spread p25–p75 (pairs) | goal | met |",
    "|---|---:|---:|---|---:|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.name} | ${fmt(r.value)} | ${fmt(r.baseline)} | ${r.unit} | ${r.ratio.toFixed(2)}x | ${r.spread ? `${r.spread[0].toFixed(2)}–${r.spread[1].toFixed(2)}x (${r.pairs})` : ""} | ${r.goal} | ${r.met === undefined ? "—" : r.met ? "yes" : "NO"} |`,
    ),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  process.stdout.write(
    `load: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")} on ${os.availableParallelism()} cores\n`,
  );
}

void main();
