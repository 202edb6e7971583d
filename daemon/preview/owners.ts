import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { JOB_MARKER, procPids } from "../process/index.js";

/** Who holds a socket: the process, its command line and the daemon job it carries the marker of. */
export interface SocketOwner {
  pid: number;
  command?: string;
  job?: string;
}

/** /proc reads between two turns of the event loop (a readlink costs a few microseconds). */
const READS_PER_TURN = 256;
const COMMAND_CHARS = 200;

const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function commandOf(pid: number): string | undefined {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0+$/, "").split("\0").join(" ");
    return argv ? argv.slice(0, COMMAND_CHARS) : undefined;
  } catch {
    return undefined;
  }
}

/** The job id in the process's AGENT_JOB_ID variable, which every process of a job inherits. */
function jobOf(pid: number): string | undefined {
  try {
    const environ = readFileSync(`/proc/${pid}/environ`, "latin1");
    const entry = environ.split("\0").find((e) => e.startsWith(`${JOB_MARKER}=`));
    return entry?.slice(JOB_MARKER.length + 1) || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Finds which process holds each socket inode by reading every /proc/<pid>/fd link, in slices
 * with a turn of the event loop between them, and stops as soon as all are found. A socket held
 * by several processes (a forked server) is credited to the lowest pid, the parent as a rule.
 */
export async function socketOwners(inodes: ReadonlySet<string>): Promise<Map<string, SocketOwner>> {
  const owners = new Map<string, SocketOwner>();
  if (!inodes.size) return owners;
  const wanted = new Map([...inodes].map((i) => [`socket:[${i}]`, i]));
  let reads = 0;
  const limit = Error.stackTraceLimit;
  for (const pid of (procPids() ?? []).sort((a, b) => a - b)) {
    if (owners.size === inodes.size) break;
    let fds: string[];
    Error.stackTraceLimit = 0; // most failures are processes just gone; their traces would cost more than the reads
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      fds = [];
    }
    for (const fd of fds) {
      if (++reads % READS_PER_TURN === 0) {
        Error.stackTraceLimit = limit;
        await yieldToLoop();
        Error.stackTraceLimit = 0;
      }
      let link: string;
      try {
        link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const inode = wanted.get(link);
      if (inode === undefined || owners.has(inode)) continue;
      const owner: SocketOwner = { pid };
      const command = commandOf(pid);
      const job = jobOf(pid);
      if (command !== undefined) owner.command = command;
      if (job !== undefined) owner.job = job;
      owners.set(inode, owner);
    }
    Error.stackTraceLimit = limit;
  }
  Error.stackTraceLimit = limit;
  return owners;
}
