import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { readSlices } from "../cli/commands/fs.js";
import { type BenchRow, row, startBenchDaemon, timePairs } from "./common.js";

/**
 * The filesystem actions against what an agent would do without them: reading a 64 MiB file
 * with files.read against `cat` through a shell job (its output followed to the end), and
 * files.search against `git grep` run directly on the same repository. Medians, alternating.
 */

const run = promisify(execFile);
const READ_BYTES = 64 * 1024 * 1024;

/**
 * 4,000 source-like files (800,000 lines) in 100 directories of a git repository: every file has
 * 2 lines with "find me" (8,000 matches), and file 0 of each directory one "rare marker" (100).
 */
export function sourceTree(root: string, dirs = 100): void {
  const line = (i: number) =>
    i % 100 === 0 ? `  const needle_${i} = compute(${i}); // find me\n` : `  const value_${i} = compute(${i}) + other(${i * 7});\n`;
  const body = Array.from({ length: 200 }, (_, i) => line(i)).join("");
  for (let d = 0; d < dirs; d++) {
    mkdirSync(join(root, `pkg${d}`), { recursive: true });
    for (let f = 0; f < 40; f++)
      writeFileSync(join(root, `pkg${d}`, `mod${f}.ts`), `export function f${f}() {\n${body}${f === 0 ? "  // rare marker\n" : ""}}\n`);
  }
}

export async function fsBenchmarks(options: { runs?: number } = {}): Promise<BenchRow[]> {
  const runs = options.runs ?? 5;
  const work = mkdtempSync(join(tmpdir(), "hotline-bench-fs-"));
  const daemon = await startBenchDaemon({}, ["--output-cap", String(4 * READ_BYTES)]);
  const rows: BenchRow[] = [];
  try {
    // 1. files.read of 64 MiB of text, in 4 MiB replies, vs `cat` in a shell job followed to its end.
    const file = join(work, "big.txt");
    writeFileSync(file, Buffer.alloc(READ_BYTES, "0123456789abcdef\n"));
    // As `hotline cat` does it: 4 MiB slices, three requests in flight; JSON text or binary frames.
    const connection = await daemon.client.openConnection();
    const readOurs = (binary: boolean) => async () => {
      let got = 0;
      let sha256: string | undefined;
      for await (const r of readSlices(connection, file, { binary })) {
        got += r.bytes.length;
        sha256 = r.sha256;
      }
      if (got !== READ_BYTES || !sha256) throw new Error(`files.read got ${got} bytes, sha256 ${sha256}`);
    };
    // `cat` as a shell job, its output followed to the end (JSON events, or binary frames).
    const readShell = (binary: boolean) => async () => {
      const { job } = await daemon.client.request("shell", { command: ["cat", file] });
      let got = 0;
      for await (const event of daemon.client.job(job.id).follow({ binary })) if (event.event === "job.output") got += event.bytes.length;
      if (got !== READ_BYTES) throw new Error(`cat through shell got ${got} bytes`);
    };
    for (const binary of [true, false]) {
      const [readMs, catMs] = await timePairs(runs, 1, readOurs(binary), readShell(binary));
      const how = binary ? "binary frames" : "JSON text";
      // Binary against binary is the goal (each side's fastest way); JSON text against JSON text for context.
      rows.push(
        row(
          `files.read 64 MiB vs cat through shell, followed (${how})`,
          readMs,
          catMs,
          "ms",
          binary ? "faster (< 1×)" : "(informational)",
          binary ? (r) => r < 1 : () => true,
        ),
      );
    }

    // 2. files.search vs git grep with the same flags on the same repository.
    const repo = join(work, "repo");
    mkdirSync(repo);
    sourceTree(repo);
    await run("git", ["init", "-q"], { cwd: repo });
    await run("git", ["add", "."], { cwd: repo });
    // The same flags as files.search uses in a repository; git grep alone prints, we also parse and send.
    const gitGrep = (pattern: string) => () =>
      run("git", ["grep", "--untracked", "-n", "--column", "-z", "-I", "-F", "-e", pattern], { cwd: repo, maxBuffer: 64 * 1024 * 1024 });
    for (const [pattern, expected, goal] of [
      ["rare marker", 100, "≤ 1.2× time"],
      ["find me", 8000, "(informational)"],
    ] as const) {
      // Searches take tens of ms: more rounds than the reads, so scheduling noise on a busy machine evens out.
      const [searchMs, grepMs] = await timePairs(
        runs * 3,
        2,
        async () => {
          const r = await daemon.client.request("files.search", { path: repo, pattern, maxResults: 10000 });
          if (r.matches.length !== expected || r.more) throw new Error(`files.search found ${r.matches.length}`);
        },
        gitGrep(pattern),
      );
      const met = goal.startsWith("≤") ? (r: number) => r <= 1.2 : () => true;
      rows.push(
        row(
          `files.search 4,000 files (800k lines), ${expected.toLocaleString("en")} matches vs git grep`,
          searchMs,
          grepMs,
          "ms",
          goal,
          met,
        ),
      );
    }
  } finally {
    await daemon.stop();
    rmSync(work, { recursive: true, force: true });
  }
  return rows;
}
