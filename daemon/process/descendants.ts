import { procPids } from "./identity.js";
import { eachInFlight, PROC_READS_IN_FLIGHT, readableProcess, readProcFile, type ReadSlot, readSlot } from "./proc-read.js";
import { signalTarget } from "./signal.js";
import { DEFAULT_GRACE_MS, escalate } from "./terminate.js";

/**
 * The variable that marks every process of a job: the daemon sets it to the job's id, and children
 * inherit it, also those that leave the job's process group (`setsid`, `nohup … &` in a new
 * session, a double fork). Not `HOTLINE_*`: no variable of the daemon's own namespace reaches a job.
 */
export const JOB_MARKER = "AGENT_JOB_ID";

/**
 * Jobs ending this close together share one scan of /proc (a few ms for a hundred processes): at most
 * one scan a second, so a stream of short jobs pays a few microseconds each. A job that ends after a
 * quiet second is scanned for after FIRST_SCAN_MS, so a lone cancel's strays go within ~0.1 s.
 */
const COALESCE_MS = 1000;
const FIRST_SCAN_MS = 20;
/** A running job's processes that jobs.status names, at most (the count covers all of them). */
export const LISTED_PROCESSES = 20;
const COMMAND_CHARS = 200;

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

/**
 * Every process (but this one) whose environment carries one of the entries. The environs are read
 * on the thread pool, a few at once (readProcFile says why: a read waits while its process holds
 * its memory map's lock), and only of processes this one may read.
 */
async function findMarked(entries: Buffer[], pids?: number[]): Promise<number[]> {
  const candidates = pids ?? procPids();
  if (!candidates) return []; // no /proc: only the process group is tracked
  const readable = candidates.filter((pid) => pid !== process.pid && readableProcess(pid));
  const found: number[] = [];
  await eachInFlight(readable, PROC_READS_IN_FLIGHT, async (pid, slot) => {
    const environ = await readProcFile(`/proc/${pid}/environ`, slot);
    if (environ?.length && entries.some((e) => holdsEntry(environ, e))) found.push(pid);
  });
  return found;
}

const MARKER_PREFIX = Buffer.from(`${JOB_MARKER}=`);

/**
 * The job id a process's environment marks it with, or undefined (no marker, gone, another
 * user's). One read of /proc/<pid>/environ off the event loop, for a process first seen: the usage
 * sampler's way to find a job's strays that left its process group and its parent.
 */
export async function markedJob(pid: number, slot: ReadSlot = readSlot()): Promise<string | undefined> {
  if (!readableProcess(pid)) return undefined;
  const environ = await readProcFile(`/proc/${pid}/environ`, slot);
  if (!environ) return undefined;
  for (let at = environ.indexOf(MARKER_PREFIX); at >= 0; at = environ.indexOf(MARKER_PREFIX, at + 1)) {
    if (at !== 0 && environ[at - 1] !== 0) continue;
    const start = at + MARKER_PREFIX.length;
    const end = environ.indexOf(0, start);
    return environ.toString("latin1", start, end < 0 ? environ.length : end) || undefined;
  }
  return undefined;
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

/** A process's command line, NULs as spaces, cut to COMMAND_CHARS; undefined once it is gone. Read off the event loop, like environs. */
async function commandOf(pid: number, slot: ReadSlot): Promise<string | undefined> {
  const bytes = await readProcFile(`/proc/${pid}/cmdline`, slot, COMMAND_CHARS * 4);
  if (bytes === undefined) return undefined;
  const text = bytes.toString("utf8").replace(/\0+$/, "").replace(/\0/g, " ");
  return text.length > COMMAND_CHARS ? `${text.slice(0, COMMAND_CHARS - 1)}…` : text;
}

/** The live processes of a job (every process carrying its marker): how many, and the first few by pid. */
export async function jobProcesses(jobId: string): Promise<{ count: number; list: Array<{ pid: number; command: string }> }> {
  const pids = (await findMarked([markerEntry(jobId)])).sort((a, b) => a - b);
  const listed = new Map<number, string>();
  // A few more than listed, in case some are gone by the time their command line is read.
  await eachInFlight(pids.slice(0, LISTED_PROCESSES * 2), PROC_READS_IN_FLIGHT, async (pid, slot) => {
    const command = await commandOf(pid, slot);
    if (command !== undefined) listed.set(pid, command);
  });
  const list = pids
    .filter((pid) => listed.has(pid))
    .slice(0, LISTED_PROCESSES)
    .map((pid) => ({ pid, command: listed.get(pid)! }));
  return { count: pids.length, list };
}
