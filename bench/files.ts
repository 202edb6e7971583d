import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { type BenchRow, row, startBenchDaemon, timeMedian, timePairs } from "./common.js";

/**
 * files.* against the tools people would otherwise use: a 1 GiB loopback download against curl
 * (throughput), and extraction of 20,000 small files against GNU tar and Info-ZIP unzip (time),
 * all through a real daemon with every safety check on. Medians of `runs` after one warm-up, ours
 * and the baseline alternating so both see the same machine load.
 */

const run = promisify(execFile);
const GIB = 1024 ** 3;

/** Serves `size` bytes at any path from one reused 1 MiB block (the disk is not the server's bottleneck). */
async function bytesServer(size: number): Promise<{ url: string; close(): void }> {
  const block = Buffer.alloc(1024 * 1024, 0x5a);
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-length": size, "accept-ranges": "bytes" });
    let left = size;
    const pump = (): void => {
      while (left > 0) {
        const n = Math.min(left, block.length);
        left -= n;
        if (!res.write(n === block.length ? block : block.subarray(0, n))) return void res.once("drain", pump);
      }
      res.end();
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** 20,000 files of 100–1,100 bytes in 200 directories, some executable. */
function smallFilesTree(root: string, count = 20_000): void {
  for (let i = 0; i < count; i++) {
    const dir = join(root, "tree", `d${i % 200}`);
    if (i < 200) mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `f${i}.txt`), `${"line of text ".repeat(8 + (i % 80))}\n`, { mode: i % 10 === 0 ? 0o755 : 0o644 });
  }
}

export async function filesBenchmarks(options: { runs?: number; downloadBytes?: number } = {}): Promise<BenchRow[]> {
  const runs = options.runs ?? 3;
  const size = options.downloadBytes ?? GIB;
  const work = mkdtempSync(join(tmpdir(), "hotline-bench-files-"));
  const daemon = await startBenchDaemon();
  const server = await bytesServer(size);
  const rows: BenchRow[] = [];
  try {
    // Download: throughput in MiB/s, ours against curl writing to the same disk.
    const dest = join(work, "download.bin");
    const [ours, curl] = await timePairs(
      runs,
      1,
      async () => {
        rmSync(dest, { force: true });
        const { job } = await daemon.client.request("files.download", { url: `${server.url}/big`, dest, wait: 600_000 });
        if (job.state !== "succeeded") throw new Error(`download failed: ${JSON.stringify(job.error)}`);
      },
      async () => {
        rmSync(dest, { force: true });
        await run("curl", ["-sS", "-o", dest, `${server.url}/big`]);
      },
    );
    // The same work as ours (download, write and SHA-256), for context: curl alone does not hash.
    const curlHashed = await timeMedian(runs, 1, async () => {
      rmSync(dest, { force: true });
      await run("bash", ["-c", `set -o pipefail; curl -sS ${JSON.stringify(`${server.url}/big`)} | tee ${JSON.stringify(dest)} | sha256sum >/dev/null`]);
    });
    rmSync(dest, { force: true });
    const mib = size / 1024 ** 2;
    rows.push(row(`files.download ${Math.round(mib)} MiB loopback vs curl`, mib / (ours / 1000), mib / (curl / 1000), "MiB/s", "≥ 0.9× curl", (r) => r >= 0.9));
    rows.push(row(`files.download ${Math.round(mib)} MiB vs curl piped to tee and sha256sum (the same work)`, mib / (ours / 1000), mib / (curlHashed / 1000), "MiB/s", "(informational)", () => true));

    // Extraction of 20,000 small files: time, ours against GNU tar and unzip.
    smallFilesTree(work);
    await run("tar", ["-czf", join(work, "small.tar.gz"), "-C", work, "tree"]);
    await run("zip", ["-qr", join(work, "small.zip"), "tree"], { cwd: work });
    rmSync(join(work, "tree"), { recursive: true, force: true });
    let n = 0;
    const outDir = () => join(work, `out${n++}`);
    const cleanOut = () => {
      for (let i = 0; i < n; i++) rmSync(join(work, `out${i}`), { recursive: true, force: true });
    };
    const extract = async (archive: string) => {
      const { job } = await daemon.client.request("files.extract", { archive, dest: outDir(), wait: 600_000 });
      if (job.state !== "succeeded") throw new Error(`extract failed: ${JSON.stringify(job.error)}`);
    };
    for (const [label, archive, baselineName, baseline] of [
      ["tar.gz", join(work, "small.tar.gz"), "GNU tar", (dest: string) => run("sh", ["-c", `mkdir "$1" && tar -xzf "$2" -C "$1"`, "sh", dest, join(work, "small.tar.gz")])],
      ["zip", join(work, "small.zip"), "unzip", (dest: string) => run("unzip", ["-q", join(work, "small.zip"), "-d", dest])],
    ] as const) {
      const [oursMs, baseMs] = await timePairs(
        runs,
        1,
        () => extract(archive),
        () => baseline(outDir()),
      );
      cleanOut();
      const kib = Math.round(statSync(archive).size / 1024);
      rows.push(row(`files.extract ${label} 20,000 files (${kib} KiB) vs ${baselineName}`, oursMs, baseMs, "ms", "≤ 1.5× time", (r) => r <= 1.5));
    }
  } finally {
    server.close();
    await daemon.stop();
    rmSync(work, { recursive: true, force: true });
  }
  return rows;
}
