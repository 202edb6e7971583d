import { spawn } from "node:child_process";
import { join } from "node:path";
import { type BenchRow, pairRow, ROOT, startBenchDaemon } from "./common.js";
import { startRawServer } from "./core.js";

const PYTHON = "/usr/bin/python3";
/** As the core rows: a finished 48 MiB job, kept whole under the default 64 MiB output cap. */
const STREAM_MIB = 48;
const STREAM_BYTES = STREAM_MIB * 1024 * 1024;
const PAIRS = 60;
const WARMUP = 3;

/** Runs bench/python-follow.py; resolves with its samples (a: hotline_client, b: plain websockets on the raw floor). */
function runPython(args: string[]): Promise<{ a: number[]; b: number[] }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(PYTHON, [join(ROOT, "bench/python-follow.py"), ...args], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    proc.stdout.on("data", (d: Buffer) => (out += d.toString()));
    proc.once("error", reject);
    proc.once("close", (code) =>
      code === 0 ? resolve(JSON.parse(out) as { a: number[]; b: number[] }) : reject(new Error(`python-follow.py exited ${code}`)),
    );
  });
}

/** The Python client's follow against a plain websockets client reading the raw floor's 1 MiB frames. */
export async function pythonBenchmarks(): Promise<BenchRow[]> {
  const raw = await startRawServer();
  const daemon = await startBenchDaemon();
  try {
    const command = `head -c ${STREAM_BYTES} /dev/zero | tr '\\0' 'a'`;
    const { job } = await daemon.client.request("shell", { command, wait: 120_000 });
    const samples = await runPython([
      daemon.url,
      join(daemon.dir, "config", "token"),
      job.id,
      raw.url,
      String(STREAM_BYTES),
      String(PAIRS),
      String(WARMUP),
    ]);
    return [
      pairRow(
        `Python hotline_client job.follow(), finished ${STREAM_MIB} MiB job vs plain websockets reading raw ws 1 MiB frames`,
        samples,
        "≥ 0.8×",
        (r) => r >= 0.8,
        STREAM_MIB,
      ),
    ];
  } finally {
    await daemon.stop();
    raw.stop();
  }
}
