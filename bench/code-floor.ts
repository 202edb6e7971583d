import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";

/**
 * The floor of `npm run bench code`: a code context's driver fed over its own pipes by a bare script,
 * no daemon in between. `code.run` of `1+1` is measured against `roundTrip` of the same driver here;
 * a context's start against `python3 -c pass` / `node -e 0`; an idle context's memory against the
 * idle driver's RSS. `node dist/bench/code-floor.js [python|javascript]` prints the figures.
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const DRIVERS = join(ROOT, "dist/daemon/code/drivers");
/** Debian's Python (the one with matplotlib); the daemon will pick a context's interpreter itself. */
export const PYTHON = "/usr/bin/python3";

export type Language = "python" | "javascript";

/** The interpreter command a context of `language` runs, and the bare start it is measured against. */
export function driverCommand(language: Language): { command: string; args: string[]; bare: string[] } {
  return language === "python"
    ? { command: PYTHON, args: ["-u", join(DRIVERS, "python_driver.py")], bare: [PYTHON, "-c", "pass"] }
    : { command: process.execPath, args: [join(DRIVERS, "js_driver.mjs")], bare: [process.execPath, "-e", "0"] };
}

/** One driver process driven directly over fds 3/4 (the daemon's part done by the simplest code). */
export class BareDriver {
  private buffered = "";
  private waiting: { resolve: (message: Record<string, unknown>) => void; reject: (err: Error) => void } | undefined;
  private readonly exited: Promise<number | null>;
  private runs = 0;

  private constructor(
    readonly child: ChildProcess,
    private readonly requests: Writable,
  ) {
    (child.stdout as Readable).resume();
    (child.stderr as Readable).resume();
    const messages = child.stdio[4] as Readable;
    messages.setEncoding("utf8");
    messages.on("data", (chunk: string) => {
      this.buffered += chunk;
      for (let newline = this.buffered.indexOf("\n"); newline >= 0; newline = this.buffered.indexOf("\n")) {
        const line = this.buffered.slice(0, newline);
        this.buffered = this.buffered.slice(newline + 1);
        const waiting = this.waiting;
        this.waiting = undefined;
        waiting?.resolve(JSON.parse(line) as Record<string, unknown>);
      }
    });
    this.exited = new Promise((resolve) =>
      child.once("exit", (code) => {
        this.waiting?.reject(new Error(`driver exited ${code}`));
        resolve(code);
      }),
    );
  }

  /** Starts a driver; resolves once it said "ready", with the milliseconds that took. */
  static async start(language: Language): Promise<{ driver: BareDriver; startMs: number }> {
    const { command, args } = driverCommand(language);
    const started = performance.now();
    const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe", "pipe", "pipe"], detached: true });
    const driver = new BareDriver(child, child.stdio[3] as Writable);
    const ready = await driver.next();
    if (ready.type !== "ready") throw new Error(`driver said ${JSON.stringify(ready)} before ready`);
    return { driver, startMs: performance.now() - started };
  }

  private next(): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
    });
  }

  /** One run, request to "done"; resolves with the round trip in milliseconds. */
  async roundTrip(code: string): Promise<number> {
    this.runs += 1;
    const started = performance.now();
    const done = this.next();
    this.requests.write(`${JSON.stringify({ type: "run", id: `r${this.runs}`, code, maxInlineBytes: 1 << 20, maxLineBytes: 8 << 20 })}\n`);
    const message = await done;
    if (message.type !== "done" || message.status !== "ok") throw new Error(`run failed: ${JSON.stringify(message)}`);
    return performance.now() - started;
  }

  /** Resident memory of the driver process (KiB). */
  rssKiB(): number {
    const status = readFileSync(`/proc/${this.child.pid}/status`, "utf8");
    return Number(/^VmRSS:\s*(\d+)/m.exec(status)?.[1] ?? Number.NaN);
  }

  /** EOF on fd 3: the driver exits. */
  async stop(): Promise<void> {
    this.requests.end();
    await this.exited;
  }
}

/** Milliseconds from spawn to exit of the bare interpreter (`python3 -c pass`, `node -e 0`). */
export function bareStart(language: Language): Promise<number> {
  const [command, ...args] = driverCommand(language).bare;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command!, args, { stdio: "ignore" });
    child.once("error", reject);
    child.once("exit", () => resolve(performance.now() - started));
  });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/** The floor figures of one language: medians of round trips, starts (interleaved with the bare start) and idle RSS. */
export async function driverFloor(language: Language, roundTrips = 500, starts = 15) {
  const driverStarts: number[] = [];
  const bareStarts: number[] = [];
  for (let i = 0; i < starts + 1; i++) {
    const bare = await bareStart(language);
    const { driver, startMs } = await BareDriver.start(language);
    await driver.stop();
    if (i > 0) {
      bareStarts.push(bare);
      driverStarts.push(startMs);
    }
  }
  const { driver } = await BareDriver.start(language);
  try {
    for (let i = 0; i < 20; i++) await driver.roundTrip("1+1");
    const trips: number[] = [];
    for (let i = 0; i < roundTrips; i++) trips.push(await driver.roundTrip("1+1"));
    return {
      language,
      roundTripMs: median(trips),
      startMs: median(driverStarts),
      bareStartMs: median(bareStarts),
      idleRssKiB: driver.rssKiB(),
    };
  } finally {
    await driver.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const languages = (process.argv[2] ? [process.argv[2]] : ["python", "javascript"]) as Language[];
  for (const language of languages) {
    const f = await driverFloor(language);
    const bare = language === "python" ? "python3 -c pass" : "node -e 0";
    process.stdout.write(
      `${language}: 1+1 round trip ${f.roundTripMs.toFixed(3)} ms (median); start to ready ${f.startMs.toFixed(1)} ms vs ${bare} ${f.bareStartMs.toFixed(1)} ms (${(f.startMs / f.bareStartMs).toFixed(2)}x); idle RSS ${(f.idleRssKiB / 1024).toFixed(1)} MiB\n`,
    );
  }
}
