import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { onTestFinished } from "vitest";
import type { OutputStream } from "../../protocol/common.js";
import type { Job } from "../../daemon/jobs/job.js";
import { JobManager, type JobOutcome } from "../../daemon/jobs/manager.js";
import { ChildBudget, ndjsonDecoder, ndjsonLine, Repl, type ReplOptions, type ReplRequest } from "../../daemon/repl/index.js";

const DRIVER = new URL("../fixtures/repl/driver.mjs", import.meta.url).pathname;
export type Message = Record<string, unknown>;

/** A job manager on a fresh directory, removed (its jobs stopped) when the test ends. */
export function jobManager(): JobManager {
  const dir = mkdtempSync(join(tmpdir(), "hotline-repl-"));
  const jobs = new JobManager({ dir, outputCapBytes: 64 * 1024 * 1024, retainJobs: 200, log: pino({ level: "silent" }) });
  jobs.restore();
  onTestFinished(async () => {
    await jobs.shutdown(200); // which also stops the spare output directories' refill
    rmSync(dir, { recursive: true, force: true });
  });
  return jobs;
}

/** A repl of the fixture driver (test/fixtures/repl/driver.mjs); closed when the test ends. */
export function fixtureRepl(jobs: JobManager, options: Partial<ReplOptions<Message>> & { budget?: ChildBudget } = {}): Repl<Message> {
  const repl = new Repl<Message>({
    jobs,
    name: "fixture",
    log: pino({ level: "silent" }),
    budget: new ChildBudget({ what: "fixtures", maxChildren: 8, advice: "close one" }),
    host: { kind: "fixture-host", title: (n) => `fixture (generation ${n})`, params: {}, cwd: tmpdir() },
    driver: {
      spawn: () => ({ argv: [process.execPath, DRIVER], cwd: tmpdir(), env: { ...process.env } as Record<string, string>, stdin: "pipe" }),
      decoder: ndjsonDecoder(1024 * 1024),
      isReady: (m) => m.type === "ready",
      // As the Python driver is stopped: SIGINT to the driver; TERM is not needed; KILL takes the group.
      stopper: {
        interrupt: (child) => void child.signal("SIGINT"),
        terminate: (child, signal) => void (signal === "SIGKILL" && child.signalGroup("SIGKILL")),
      },
    },
    ...options,
  });
  onTestFinished(() => repl.close("test over", 200));
  return repl;
}

let runs = 0;

/** A run of one directive, ending with the driver's done message: ok → succeeded, else failed with exit code 1. */
export function run(repl: Repl<Message>, code: string, extra: Partial<ReplRequest<Message>> = {}): Job {
  const id = `r${++runs}`;
  return repl.request({
    kind: "fixture-run",
    title: code,
    params: { code },
    send: (child) => void child.requests.write(ndjsonLine({ type: "run", id, code })),
    message: (m): JobOutcome | undefined => {
      if (m.type !== "done" || m.id !== id) return undefined;
      return m.status === "ok" ? { ok: true, exitCode: 0, result: m } : { ok: false, exitCode: 1 };
    },
    ...extra,
  });
}

/** A job's whole output log (one stream, or all). */
export function outputOf(job: Job, stream?: OutputStream): Buffer {
  const parts: Buffer[] = [];
  const size = job.log!.size;
  for (let from = 0; from < size; ) {
    const { pieces, next } = job.log!.read(from, size - from, stream);
    for (const p of pieces) parts.push(Buffer.from(p.data));
    if (next === from) break;
    from = next;
  }
  return Buffer.concat(parts);
}

/** Resolves when the job has ended (within 20 s). */
export async function ended(jobs: JobManager, job: Job): Promise<Job> {
  const { timedOut } = await jobs.wait(job.id, 20_000);
  if (timedOut) throw new Error(`job ${job.id} (${job.record.title}) did not end: ${JSON.stringify(job.status())}`);
  return job;
}
