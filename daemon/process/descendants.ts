import { closeSync, openSync, readSync } from "node:fs";
import { procPids } from "./identity.js";
import { signalTarget } from "./signal.js";
import { DEFAULT_GRACE_MS, escalate } from "./terminate.js";

/**
 * The variable that marks every process of a job: the daemon sets it to the job's id, and children
 * inherit it, also those that leave the job's process group (`setsid`, `nohup … &` in a new
 * session, a double fork). Not `HOTLINE_*`: no variable of the daemon's own namespace reaches a job.
 */
export const JOB_MARKER = "AGENT_JOB_ID";

/**
 * Jobs ending this close together share one scan of /proc (~2 ms for a hundred processes): at most
 * one scan a second, so a stream of short jobs pays a few microseconds each. A job that ends after a
 * quiet second is scanned for after FIRST_SCAN_MS, so a lone cancel's strays go within ~0.1 s.
 */
const COALESCE_MS = 1000;
const FIRST_SCAN_MS = 20;
/** A running job's processes that jobs.status names, at most (the count covers all of them). */
export const LISTED_PROCESSES = 20;
const COMMAND_CHARS = 200;
/** /proc reads between two turns of the event loop (about 10 µs each). */
const READS_PER_TURN = 32;

const pending = new Set<string>();
let scheduled = false;

/** The bytes a marked environ holds: the entry with its terminating NUL. */
function markerEntry(jobId: string): Buffer {
  return Buffer.from(`${JOB_MARKER}=${jobId}\0`);
}

/** Whether an environ (NUL-separated) holds the entry exactly, not as the tail of another one. */
function holdsEntry(environ: Buffer, entry: Buffer): boolean {
  for (let at = environ.indexOf(entry); at >= 0; at = environ.indexOf(entry, at + 1)) {
    if (at === 0 || environ[at - 1] === 0) return true;
  }
  return false;
}

/** One buffer for every environ read: most are a few KiB, and a scan reads a hundred of them. */
let scratch = Buffer.allocUnsafe(64 * 1024);

/**
 * The environ of a live process (a view of `scratch`, valid until the next read), or undefined when
 * it is gone or another user's. Plain open/read/close: procfs reports size 0, which sends
 * readFileSync down its slow growing-chunks path.
 */
function environOf(pid: number): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(`/proc/${pid}/environ`, "r");
  } catch {
    return undefined;
  }
  try {
    let length = 0;
    for (;;) {
      if (length === scratch.length) scratch = Buffer.concat([scratch, Buffer.allocUnsafe(scratch.length)]);
      const n = readSync(fd, scratch, length, scratch.length - length, null);
      if (n === 0) return scratch.subarray(0, length);
      length += n;
    }
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Every process (but this one) whose environment carries one of the entries. Reads /proc
 * synchronously — a procfs read costs microseconds, far less than a trip through the thread
 * pool — in small batches with a turn of the event loop between them, so no request waits long.
 */
async function findMarked(entries: Buffer[], pids?: number[]): Promise<number[]> {
  const candidates = pids ?? procPids();
  if (!candidates) return []; // no /proc: only the process group is tracked
  const found: number[] = [];
  for (let i = 0; i < candidates.length; i += READS_PER_TURN) {
    if (i > 0) await yieldToLoop();
    // Most reads fail (other users' processes, ones just gone); their stack traces would cost more than the reads.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      for (const pid of candidates.slice(i, i + READS_PER_TURN)) {
        if (pid === process.pid) continue;
        const environ = environOf(pid);
        if (environ?.length && entries.some((e) => holdsEntry(environ, e))) found.push(pid);
      }
    } finally {
      Error.stackTraceLimit = limit;
    }
  }
  return found;
}

const MARKER_PREFIX = Buffer.from(`${JOB_MARKER}=`);

/**
 * The job id a process's environment marks it with, or undefined (no marker, gone, another
 * user's). One read of /proc/<pid>/environ, for a process first seen: the usage sampler's way to
 * find a job's strays that left its process group and its parent.
 */
export function markedJob(pid: number): string | undefined {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0; // most reads fail (other users' processes): their stacks would cost more than the reads
  try {
    const environ = environOf(pid);
    if (!environ) return undefined;
    for (let at = environ.indexOf(MARKER_PREFIX); at >= 0; at = environ.indexOf(MARKER_PREFIX, at + 1)) {
      if (at !== 0 && environ[at - 1] !== 0) continue;
      const start = at + MARKER_PREFIX.length;
      const end = environ.indexOf(0, start);
      return environ.toString("latin1", start, end < 0 ? environ.length : end) || undefined;
    }
    return undefined;
  } finally {
    Error.stackTraceLimit = limit;
  }
}

let exitListener: ((jobId: string) => void) | undefined;

/**
 * Who hears, synchronously, that a job's main process has just exited (and been reaped): the usage
 * sampler, which reads the CPU time the kernel just added to the daemon's own children's total.
 * reapMarked is that moment for every runner, so the hook sits there.
 */
export function onMainExit(listener: ((jobId: string) => void) | undefined): void {
  exitListener = listener;
}

let lastScanAt = 0;

/** One scan for every job that ended since the last: SIGTERM, then SIGKILL to those still marked. */
async function scan(): Promise<void> {
  scheduled = false;
  lastScanAt = Date.now();
  const entries = [...pending].map(markerEntry);
  pending.clear();
  const marked = await findMarked(entries);
  if (!marked.length) return;
  // The same grace as for the job's own process group.
  escalate((signal) => {
    if (signal !== "SIGKILL") return void marked.forEach((pid) => signalTarget(pid, signal));
    // Re-read, so a pid reused by an unrelated process in the meantime is left alone.
    void findMarked(entries, marked).then((still) => still.forEach((pid) => signalTarget(pid, "SIGKILL")));
  }, DEFAULT_GRACE_MS);
}

/**
 * Stops, soon and off the caller's path, every process still carrying the job's marker: the ones
 * that left its process group. Scans of jobs that end together are coalesced into one.
 */
export function reapMarked(jobId: string): void {
  try {
    exitListener?.(jobId);
  } catch {
    // usage is a report: it never keeps a job's strays from being stopped
  }
  pending.add(jobId);
  if (scheduled) return;
  scheduled = true;
  const delay = Math.max(FIRST_SCAN_MS, lastScanAt + COALESCE_MS - Date.now());
  setTimeout(() => void scan().catch(() => {}), delay).unref();
}

/** A process's command line, NULs as spaces, cut to COMMAND_CHARS; undefined once it is gone. */
function commandOf(pid: number): string | undefined {
  let fd: number;
  try {
    fd = openSync(`/proc/${pid}/cmdline`, "r");
  } catch {
    return undefined;
  }
  try {
    const n = readSync(fd, scratch, 0, COMMAND_CHARS * 4, null);
    const text = scratch.subarray(0, n).toString("utf8").replace(/\0+$/, "").replace(/\0/g, " ");
    return text.length > COMMAND_CHARS ? `${text.slice(0, COMMAND_CHARS - 1)}…` : text;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** The live processes of a job (every process carrying its marker): how many, and the first few by pid. */
export async function jobProcesses(jobId: string): Promise<{ count: number; list: Array<{ pid: number; command: string }> }> {
  const pids = (await findMarked([markerEntry(jobId)])).sort((a, b) => a - b);
  const list: Array<{ pid: number; command: string }> = [];
  for (const pid of pids) {
    if (list.length === LISTED_PROCESSES) break;
    const command = commandOf(pid);
    if (command !== undefined) list.push({ pid, command });
  }
  return { count: pids.length, list };
}
