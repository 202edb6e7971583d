import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { signalTarget } from "../process/index.js";

/** A walk of a session's processes looks at this many at most, so its cost is bounded. */
const MAX_PROCESSES = 128;

/** A /proc read that may fail (the process just ended) without a stack trace nobody reads. */
function quietly<T>(read: () => T): T | undefined {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return read();
  } catch {
    return undefined;
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** The children of a process, of all its threads (a thread that forks lists its children in its own file). */
export function childrenOf(pid: number): number[] {
  const tasks = quietly(() => readdirSync(`/proc/${pid}/task`)) ?? [];
  const children: number[] = [];
  for (const task of tasks) {
    const text = quietly(() => readFileSync(`/proc/${pid}/task/${task}/children`, "utf8")) ?? "";
    for (const word of text.split(" ")) if (word) children.push(Number(word));
  }
  return children;
}

/** The children of a single-threaded process (a shell): one read of its main thread's children file. */
export function childrenOfShell(pid: number): number[] {
  const text = quietly(() => readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8")) ?? "";
  return text.split(" ").filter(Boolean).map(Number);
}

/** `roots` and their descendants, breadth first, at most MAX_PROCESSES. */
export function treeOf(roots: number[]): number[] {
  const out: number[] = [];
  const queue = [...roots];
  while (queue.length && out.length < MAX_PROCESSES) {
    const pid = queue.shift()!;
    out.push(pid);
    queue.push(...childrenOf(pid));
  }
  return out;
}

/** Where a process's fd 0 points (`/dev/null`, `pipe:[…]`, a FIFO's path); undefined when it is gone. */
export function stdinOf(pid: number): string | undefined {
  return quietly(() => readlinkSync(`/proc/${pid}/fd/0`));
}

/**
 * The processes a cancel stops: the running command's foreground, never its background. Without
 * job control everything a session starts shares the shell's process group, so the group cannot be
 * signalled; instead the shell's children are sorted. Those alive when the command started
 * (`before`) are earlier commands' background jobs. Of the new ones, a child reading the session's
 * FIFO or a pipe is foreground (a command's stdin is the FIFO; a pipeline's members read pipes);
 * one on /dev/null is a background job (bash gives `cmd &` /dev/null as its stdin) — unless no
 * child is foreground, when it is a foreground command run with `</dev/null`. Each chosen child
 * comes with its descendants.
 */
export function foregroundOf(shell: number, fifo: string, before: ReadonlySet<number>): number[] {
  const fresh = childrenOfShell(shell).filter((pid) => !before.has(pid));
  const reading = fresh.filter((pid) => {
    const stdin = stdinOf(pid);
    return stdin === fifo || stdin?.startsWith("pipe:") === true;
  });
  const chosen = reading.length ? reading : fresh.filter((pid) => stdinOf(pid) !== undefined);
  return treeOf(chosen);
}

/** Signals each of `pids`; processes that are gone are skipped. */
export function signalEach(pids: number[], signal: NodeJS.Signals): void {
  for (const pid of pids) signalTarget(pid, signal);
}
