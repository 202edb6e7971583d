import { readFileSync } from "node:fs";
import { ActionError } from "../../protocol/errors.js";

export interface BudgetOptions {
  /** What the children are, in the refusal ("shell sessions"). */
  what: string;
  /** Live children at most. */
  maxChildren: number;
  /** Their resident memory together at most (their main processes', read from /proc), when set. */
  maxMemoryBytes?: number;
  /** How to free room, for the refusal ("close one with session.close"). */
  advice: string;
}

/** A child's place in the budget, held from before its start until it is closed or has exited. */
export interface Reservation {
  /** The child (of the current generation) whose memory counts. */
  setPid(pid: number | undefined): void;
  release(): void;
}

/** Resident memory of a process in bytes (VmRSS); 0 when it is gone or /proc is not there. */
export function residentBytes(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * How many long-lived children (sessions, contexts) may live at once and how much memory they may
 * hold: a start past either is refused with `limit_exceeded` naming the limit, before anything is
 * spawned. Memory is read only when a start asks (one /proc read per live child).
 */
export class ChildBudget {
  private readonly live = new Set<{ pid?: number }>();

  constructor(private readonly options: BudgetOptions) {}

  get count(): number {
    return this.live.size;
  }

  /** Resident bytes of the live children's main processes. */
  memoryBytes(): number {
    let total = 0;
    for (const holder of this.live) if (holder.pid !== undefined) total += residentBytes(holder.pid);
    return total;
  }

  reserve(): Reservation {
    const { what, maxChildren, maxMemoryBytes, advice } = this.options;
    if (this.live.size >= maxChildren) {
      throw new ActionError("limit_exceeded", `at most ${maxChildren} ${what} may be open at once and ${this.live.size} are; ${advice}`, {
        details: { limit: maxChildren, open: this.live.size },
      });
    }
    if (maxMemoryBytes !== undefined) {
      const used = this.memoryBytes();
      if (used >= maxMemoryBytes) {
        const mib = (n: number) => Math.round(n / 1048576);
        throw new ActionError(
          "limit_exceeded",
          `the ${this.live.size} open ${what} hold ${mib(used)} MiB, and at most ${mib(maxMemoryBytes)} MiB may be held; ${advice}`,
          { details: { limitBytes: maxMemoryBytes, usedBytes: used, open: this.live.size } },
        );
      }
    }
    const holder: { pid?: number } = {};
    this.live.add(holder);
    return {
      setPid: (pid) => void (holder.pid = pid),
      release: () => void this.live.delete(holder),
    };
  }
}
