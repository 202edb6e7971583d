import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { DAEMON_NODE_FLAGS } from "../daemon/node-flags.js";
import { type BenchRow, pairRow, ROOT, samplePairs, startBenchDaemon } from "./common.js";

/** Interleaved pairs per row: a process start varies ±20 % on two shared cores; 21 pin the median. */
const PAIRS = 21;
const WARMUP = 2;

const CLI = join(ROOT, "dist/cli/main.js");
const DAEMON = join(ROOT, "dist/daemon/main.js");
const FLOORS = join(ROOT, "dist/bench/floors");

/** Runs a command to its exit (output discarded); rejects on a non-zero exit unless `expect` says otherwise. */
function run(args: string[], env: NodeJS.ProcessEnv = process.env, expect = 0): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env, stdio: "ignore" });
    child.once("error", reject);
    child.once("exit", (code) => (code === expect ? resolve() : reject(new Error(`${args.join(" ")} exited ${code}`))));
  });
}

/**
 * A process started with a fresh HOME until it logs "listening" on stderr: resolves with the
 * milliseconds from exec to that line, then stops it (its shutdown is not timed).
 */
function untilListening(args: string[]): Promise<number> {
  const home = mkdtempSync(join(tmpdir(), "hotline-bench-start-"));
  const started = performance.now();
  const child = spawn(process.execPath, args, { env: { ...freshEnv(home) }, stdio: ["ignore", "ignore", "pipe"] });
  return new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stderr! }).on("line", (line) => {
      if (!line.includes('"msg":"listening"')) return;
      const ms = performance.now() - started;
      child.once("exit", () => {
        rmSync(home, { recursive: true, force: true });
        resolve(ms);
      });
      child.kill("SIGKILL");
    });
    child.once("exit", (code, signal) => signal === null && reject(new Error(`${args.join(" ")} exited ${code} before listening`)));
  });
}

/** An environment whose HOME (and so every hotline directory) is `home`: nothing of a daemon before. */
function freshEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
  for (const name of Object.keys(env)) if (name.startsWith("HOTLINE_") || name.startsWith("XDG_")) delete env[name];
  return env;
}

/**
 * The start-up rows (issue 38): the CLI and the daemon against the floor of a bare Node process
 * doing the same thing, measured in the same run, in interleaved pairs.
 */
export async function startupBenchmarks(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const cli = (...args: string[]) => [...DAEMON_NODE_FLAGS, CLI, ...args];

  rows.push(
    pairRow(
      "`hotline --help` vs `node -e 0`",
      await samplePairs(
        PAIRS,
        WARMUP,
        () => run(cli("--help")),
        () => run(["-e", "0"]),
      ),
      "≤ 1.5×",
      (r) => r <= 1.5,
    ),
  );

  rows.push(
    pairRow(
      "daemon exec → listening (--ssh off, fresh HOME) vs a bare Node script that loads ws and listens",
      await samplePairs(
        PAIRS,
        WARMUP,
        () => untilListening([...DAEMON_NODE_FLAGS, DAEMON, "--port", "0", "--ssh", "off"]),
        () => untilListening([join(FLOORS, "ws-listen.js")]),
      ),
      "≤ 2.5×",
      (r) => r <= 2.5,
    ),
  );

  const daemon = await startBenchDaemon({}, ["--ssh", "off"]);
  try {
    const env = {
      ...process.env,
      HOME: daemon.dir,
      HOTLINE_STATE_DIR: join(daemon.dir, "state"),
      HOTLINE_CONFIG_DIR: join(daemon.dir, "config"),
    };
    rows.push(
      pairRow(
        "`hotline state info` vs a bare Node script that opens one WebSocket and asks state.info",
        await samplePairs(
          PAIRS,
          WARMUP,
          () => run(cli("state", "info"), env),
          () => run([join(FLOORS, "ws-ask.js")], env),
        ),
        "≤ 1.5×",
        (r) => r <= 1.5,
      ),
    );
    // The CLI's other starts, for the README (no goal): what a verb costs beyond the floor.
    for (const [name, args, expect] of [
      ["`hotline jobs`", ["jobs"], 0],
      ["`hotline schema state.info`", ["schema", "state.info"], 0],
      ["`hotline daemon --help`", ["daemon", "--help"], 0],
      ["`hotline mcp --help`", ["mcp", "--help"], 0],
      ["a second daemon on a held state directory, refused (exit 3)", ["daemon", "--port", "0", "--ssh", "off"], 3],
    ] as const) {
      rows.push(
        pairRow(
          `${name} vs \`node -e 0\``,
          await samplePairs(
            PAIRS,
            WARMUP,
            () => run(cli(...args), env, expect),
            () => run(["-e", "0"]),
          ),
          "reported",
          () => undefined,
        ),
      );
    }
  } finally {
    await daemon.stop();
  }
  return rows;
}
