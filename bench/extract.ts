import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { type BenchRow, pairRow, samplePairs, startBenchDaemon } from "./common.js";
import { smallFilesTree } from "./files.js";

const run = promisify(execFile);

/**
 * `npm run bench extract`: files.extract of 20,000 small files (tar.gz and zip) against GNU tar
 * and Info-ZIP unzip, as interleaved pairs (the medians of the per-pair ratios; each side's output
 * directory is removed outside the timing).
 */
export async function extractBenchmarks(options: { runs?: number } = {}): Promise<BenchRow[]> {
  const runs = options.runs ?? (Number(process.env.HOTLINE_BENCH_RUNS) || 7);
  const work = mkdtempSync(join(tmpdir(), "hotline-bench-extract-"));
  smallFilesTree(work);
  await run("tar", ["-czf", join(work, "small.tar.gz"), "-C", work, "tree"]);
  await run("zip", ["-qr", join(work, "small.zip"), "tree"], { cwd: work });
  rmSync(join(work, "tree"), { recursive: true, force: true });
  const daemon = await startBenchDaemon();
  const rows: BenchRow[] = [];
  let n = 0;
  /** Times `fn` on a fresh output directory, then removes it (untimed). */
  const timed = async (fn: (dest: string) => Promise<unknown>): Promise<number> => {
    const dest = join(work, `out${n++}`);
    const t = performance.now();
    await fn(dest);
    const ms = performance.now() - t;
    rmSync(dest, { recursive: true, force: true });
    return ms;
  };
  try {
    const cases = [
      ["tar.gz", "small.tar.gz", "GNU tar", (a: string, d: string) => run("sh", ["-c", `mkdir "$1" && tar -xzf "$2" -C "$1"`, "sh", d, a])],
      ["zip", "small.zip", "unzip", (a: string, d: string) => run("unzip", ["-q", a, "-d", d])],
    ] as const;
    for (const [label, file, baselineName, baseline] of cases) {
      const archive = join(work, file);
      const samples = await samplePairs(
        runs,
        1,
        () =>
          timed(async (dest) => {
            const { job } = await daemon.client.request("files.extract", { archive, dest, wait: 600_000 });
            if (job.state !== "succeeded") throw new Error(`extract failed: ${JSON.stringify(job.error)}`);
          }),
        () => timed((dest) => baseline(archive, dest)),
      );
      const kib = Math.round(statSync(archive).size / 1024);
      rows.push(pairRow(`files.extract ${label} 20,000 files (${kib} KiB) vs ${baselineName}`, samples, "≤ 1.3× time", (r) => r <= 1.3));
    }
  } finally {
    await daemon.stop();
    rmSync(work, { recursive: true, force: true });
  }
  return rows;
}
