import { readFileSync } from "node:fs";
import { stdinOf, treeOf } from "./processes.js";

/** System call numbers /proc/<pid>/syscall shows for a read, and for the waits of an event loop. */
const SYSCALLS: Readonly<Record<string, { read: number[]; wait: number[] }>> = {
  // read, readv; poll, select, pselect6, ppoll, epoll_wait, epoll_pwait, epoll_pwait2
  x64: { read: [0, 19], wait: [7, 23, 270, 271, 232, 281, 441] },
  // read, readv; pselect6, ppoll, epoll_pwait, epoll_pwait2
  arm64: { read: [63, 65], wait: [72, 73, 22, 441] },
};
const CALLS = SYSCALLS[process.arch];

/** The system call a process is blocked in and its first argument; undefined while it runs or is gone. */
function blockedIn(pid: number): { call: number; arg0: string } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/syscall`, "utf8");
  } catch {
    return undefined;
  }
  const [call, arg0] = text.split(" ");
  return call && /^\d+$/.test(call) ? { call: Number(call), arg0: arg0 ?? "" } : undefined;
}

/**
 * Whether a process of the running command (the shell itself for `read`, or any of its
 * descendants) is blocked reading the session's stdin FIFO: in read(2) on fd 0, or — an event loop
 * (node's readline, as in `npx`) — in a poll or epoll wait while its fd 0 is the FIFO and the output
 * stops mid-line, where a prompt waits. Bounded: treeOf looks at 128 processes at most.
 */
export function waitsForInput(shell: number, fifo: string, endsMidLine: boolean): boolean {
  if (!CALLS) return false;
  for (const pid of treeOf([shell])) {
    if (stdinOf(pid) !== fifo) continue;
    const blocked = blockedIn(pid);
    if (!blocked) continue;
    if (CALLS.read.includes(blocked.call) && blocked.arg0 === "0x0") return true;
    if (endsMidLine && CALLS.wait.includes(blocked.call)) return true;
  }
  return false;
}

/**
 * Watches a running command for a wait on its stdin: after `waitMs` without output or input it
 * looks (waitsForInput), and again every `waitMs` while nothing happens; `report` hears each change.
 * Output or input clears it at once.
 */
export class InputWatch {
  awaiting = false;
  private lastActivity = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly probe: () => boolean,
    private readonly waitMs: number,
    private readonly report: (awaiting: boolean) => void,
  ) {
    this.arm(waitMs);
  }

  /** Output or input: the command is not waiting (now). */
  activity(): void {
    this.lastActivity = Date.now();
    if (!this.awaiting) return;
    this.awaiting = false;
    this.report(false);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => this.check(), ms);
    this.timer.unref();
  }

  private check(): void {
    if (this.stopped) return;
    const quiet = Date.now() - this.lastActivity;
    if (quiet < this.waitMs) return this.arm(this.waitMs - quiet);
    const waiting = this.probe();
    if (waiting !== this.awaiting) {
      this.awaiting = waiting;
      this.report(waiting);
    }
    this.arm(this.waitMs);
  }
}
