import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { connect } from "../client/index.js";
import { type BenchDaemon, type BenchRow, median, pairRow, row, samplePairs, startBenchDaemon, timePairs } from "./common.js";

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
export function smallFilesTree(root: string, count = 20_000): void {
  for (let i = 0; i < count; i++) {
    const dir = join(root, "tree", `d${i % 200}`);
    if (i < 200) mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `f${i}.txt`), `${"line of text ".repeat(8 + (i % 80))}\n`, { mode: i % 10 === 0 ? 0o755 : 0o644 });
  }
}

/**
 * A valid zstd frame carrying `content` as raw blocks of `blockBytes` each, under a frame header
 * that declares a window of 2^`windowLog` bytes. zstd itself never writes this, but decoders must
 * accept it: with a large window and tiny blocks it is the cheapest way to make a decoder that
 * moves its window per block do enormous work for a few input bytes (issue 10.1). The tests use it too.
 */
export function zstdRawBlocks(content: Buffer, blockBytes: number, windowLog = 27): Buffer {
  const parts: Buffer[] = [Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, (windowLog - 10) << 3])];
  for (let at = 0; at < content.length || at === 0; at += blockBytes) {
    const piece = content.subarray(at, at + blockBytes);
    const header = (at + blockBytes >= content.length ? 1 : 0) | (piece.length << 3); // last flag, raw type (0), size
    parts.push(Buffer.from([header & 0xff, (header >> 8) & 0xff, (header >> 16) & 0xff]), piece);
  }
  return Buffer.concat(parts);
}

/**
 * state.info round trips from a second client while the daemon extracts the archives of issue
 * 10.1: the 80 KB frame of 20,000 one-byte blocks under a 128 MiB window (refused), and 40 MiB in
 * full 128 KiB blocks under the same window (the shape `zstd --long=27` writes: decoded, slowly).
 */
async function extractionResponsiveness(daemon: BenchDaemon, work: string): Promise<BenchRow> {
  const one = (name: string, size: number): string => {
    const dir = join(work, `src-${name}`);
    mkdirSync(dir);
    writeFileSync(join(dir, name), Buffer.alloc(size, 0x61));
    return dir;
  };
  const tarOf = async (dir: string, name: string): Promise<Buffer> =>
    (await run("tar", ["-cf", "-", "-C", dir, name], { encoding: "buffer", maxBuffer: 256 * 1024 * 1024 })).stdout;
  const nasty = join(work, "nasty.tar.zst");
  writeFileSync(nasty, zstdRawBlocks(await tarOf(one("pad.bin", 18_000), "pad.bin"), 1));
  const wide = join(work, "wide.tar.zst");
  writeFileSync(wide, zstdRawBlocks(await tarOf(one("big.bin", 40 * 1024 * 1024), "big.bin"), 128 * 1024));
  const probe = await connect({ url: daemon.url, token: daemon.token });
  try {
    const idle: number[] = [];
    for (let i = 0; i < 50; i++) {
      const t = performance.now();
      await probe.request("state.info");
      idle.push(performance.now() - t);
    }
    const busy: number[] = [];
    for (const [archive, expected] of [
      [nasty, "failed"],
      [wide, "succeeded"],
    ] as const) {
      let done = false;
      const extracting = daemon.client
        .request("files.extract", { archive, dest: join(work, `out-${busy.length}`), wait: 600_000 })
        .finally(() => (done = true));
      while (!done) {
        const t = performance.now();
        await probe.request("state.info");
        busy.push(performance.now() - t);
      }
      const { job } = await extracting;
      if (job.state !== expected) throw new Error(`${archive}: ${job.state}, expected ${expected}`);
    }
    const p99 = busy.sort((a, b) => a - b)[Math.floor(busy.length * 0.99)]!;
    return row(
      `state.info p99 while extracting hostile tar.zst (${busy.length} samples) vs idle median`,
      p99,
      median(idle),
      "ms",
      "p99 <= 100 ms",
      () => p99 <= 100,
    );
  } finally {
    await probe.close();
  }
}

/**
 * Download throughput in MiB/s from a loopback server, ours against curl writing to the same disk:
 * without a checksum against `curl -o`, and with one (`sha256`) against `curl | tee | sha256sum`,
 * the same work. Interleaved pairs.
 */
async function downloadRows(daemon: BenchDaemon, base: string, size: number, work: string, runs: number): Promise<BenchRow[]> {
  const dest = join(work, "download.bin");
  const url = `${base}/big`;
  const ours = async (extra: Record<string, unknown>) => {
    rmSync(dest, { force: true });
    const { job } = await daemon.client.request("files.download", { url, dest, wait: 600_000, ...extra });
    if (job.state !== "succeeded") throw new Error(`download failed: ${JSON.stringify(job.error)}`);
  };
  const shell = async (command: string) => {
    rmSync(dest, { force: true });
    await run("bash", ["-c", `set -o pipefail; ${command}`]);
  };
  const q = (s: string) => JSON.stringify(s);
  const plain = await samplePairs(
    runs,
    1,
    () => ours({}),
    () => shell(`curl -sS -o ${q(dest)} ${q(url)}`),
  );
  const sha256 = bigSha256(size);
  const hashed = await samplePairs(
    runs,
    1,
    () => ours({ sha256 }),
    () => shell(`curl -sS ${q(url)} | tee ${q(dest)} | sha256sum >/dev/null`),
  );
  rmSync(dest, { force: true });
  const mib = size / 1024 ** 2;
  return [
    pairRow(`files.download ${Math.round(mib)} MiB loopback vs curl -o`, plain, "≥ 0.9× curl", (r) => r >= 0.9, mib),
    pairRow(
      `files.download ${Math.round(mib)} MiB with sha256 vs curl piped to tee and sha256sum (the same work)`,
      hashed,
      "≥ 1.3×",
      (r) => r >= 1.3,
      mib,
    ),
  ];
}

/** The SHA-256 of what bytesServer serves (`size` bytes of 0x5a). */
function bigSha256(size: number): string {
  const hash = createHash("sha256");
  const block = Buffer.alloc(1024 * 1024, 0x5a);
  for (let left = size; left > 0; left -= block.length) hash.update(left >= block.length ? block : block.subarray(0, left));
  return hash.digest("hex");
}

/** `npm run bench download`: only the download rows (a daemon and a 1 GiB loopback server of their own). */
export async function downloadBenchmarks(options: { runs?: number; downloadBytes?: number } = {}): Promise<BenchRow[]> {
  const size = options.downloadBytes ?? GIB;
  const work = mkdtempSync(join(tmpdir(), "hotline-bench-download-"));
  const daemon = await startBenchDaemon();
  const server = await bytesServer(size);
  try {
    return await downloadRows(daemon, server.url, size, work, options.runs ?? 5);
  } finally {
    server.close();
    await daemon.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

export async function filesBenchmarks(options: { runs?: number; downloadBytes?: number } = {}): Promise<BenchRow[]> {
  const runs = options.runs ?? 3;
  const size = options.downloadBytes ?? GIB;
  const work = mkdtempSync(join(tmpdir(), "hotline-bench-files-"));
  // Made before the daemon starts: writing 20,000 files synchronously can hold this process past
  // the daemon's heartbeat on a loaded machine, and a missed pong closes the client's connection.
  smallFilesTree(work);
  await run("tar", ["-czf", join(work, "small.tar.gz"), "-C", work, "tree"]);
  await run("zip", ["-qr", join(work, "small.zip"), "tree"], { cwd: work });
  rmSync(join(work, "tree"), { recursive: true, force: true });
  const daemon = await startBenchDaemon();
  const server = await bytesServer(size);
  const rows: BenchRow[] = [];
  try {
    rows.push(...(await downloadRows(daemon, server.url, size, work, runs)));

    rows.push(await extractionResponsiveness(daemon, work));

    // Extraction of 20,000 small files (archives made above): time, ours against GNU tar and unzip.
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
      [
        "tar.gz",
        join(work, "small.tar.gz"),
        "GNU tar",
        (dest: string) => run("sh", ["-c", `mkdir "$1" && tar -xzf "$2" -C "$1"`, "sh", dest, join(work, "small.tar.gz")]),
      ],
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
      rows.push(
        row(`files.extract ${label} 20,000 files (${kib} KiB) vs ${baselineName}`, oursMs, baseMs, "ms", "≤ 1.5× time", (r) => r <= 1.5),
      );
    }
  } finally {
    server.close();
    await daemon.stop();
    rmSync(work, { recursive: true, force: true });
  }
  return rows;
}
