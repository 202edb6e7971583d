import { statSync } from "node:fs";
import { open } from "node:fs/promises";

/** The most of one /proc file read (an environment is bounded by what execve took: a few MiB at most). */
const MAX_BYTES = 8 * 1024 * 1024;
/** Reads of other processes' /proc files in flight at once (the thread pool has four threads). */
export const PROC_READS_IN_FLIGHT = 8;

const ownUid = process.getuid?.() ?? 0;

/**
 * Whether this process may read another's environ and cmdline: it runs as root, or the other as the
 * same user. Asked first (one stat of /proc/<pid>, which takes no lock of the other process), so a
 * machine full of other users' processes costs no failed reads.
 */
export function readableProcess(pid: number): boolean {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0; // a process just gone is the common failure; its stack would cost more than the stat
  try {
    const st = statSync(`/proc/${pid}`, { throwIfNoEntry: false });
    return st !== undefined && (ownUid === 0 || st.uid === ownUid);
  } catch {
    return false;
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** A reusable read buffer (one per reader in flight), replaced by a bigger one when a file does not fit. */
export interface ReadSlot {
  buf: Buffer;
}

export function readSlot(): ReadSlot {
  return { buf: Buffer.allocUnsafe(64 * 1024) };
}

/**
 * A /proc file of another process (its environ, its cmdline), read off the event loop: such a read
 * waits while that process holds its memory map's lock (it is forking, mapping memory), and on a
 * busy machine the holder can wait for a CPU for hundreds of ms (measured: 61 ms reading the
 * environ of a process forking in a loop, with the machine at load 10). On the thread pool only a
 * pool thread waits. The bytes are a view of `slot.buf`, valid until its next read; undefined when
 * the process is gone or not readable.
 */
export async function readProcFile(path: string, slot: ReadSlot, maxBytes = MAX_BYTES): Promise<Buffer | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, "r");
  } catch {
    return undefined;
  }
  try {
    let length = 0;
    for (;;) {
      if (length === slot.buf.length) {
        if (length >= maxBytes) return slot.buf.subarray(0, length);
        const bigger = Buffer.allocUnsafe(Math.min(maxBytes, slot.buf.length * 2));
        slot.buf.copy(bigger, 0, 0, length);
        slot.buf = bigger;
      }
      const { bytesRead } = await handle.read(slot.buf, length, slot.buf.length - length, length);
      if (bytesRead === 0) return slot.buf.subarray(0, length);
      length += bytesRead;
    }
  } catch {
    return undefined;
  } finally {
    await handle.close().catch(() => {});
  }
}

/** Runs `work` on every item, at most `inFlight` at once, each worker with a read slot of its own. */
export async function eachInFlight<T>(
  items: readonly T[],
  inFlight: number,
  work: (item: T, slot: ReadSlot) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    const slot = readSlot();
    while (next < items.length) await work(items[next++]!, slot);
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, items.length) }, worker));
}
