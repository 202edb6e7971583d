import type { Static } from "@sinclair/typebox";
import type { ListeningPort } from "../../protocol/actions/ports.js";
import { ActionError } from "../../protocol/errors.js";
import { connectAddress, type ListenEntry, readListenTable } from "./listen-table.js";
import { socketOwners } from "./owners.js";
import { Shared } from "./shared.js";

export type PortInfo = Static<typeof ListeningPort>;

/** How often waiting ports.wait calls look at the table (one read serves them all). */
const POLL_MS = 150;
/** ports.wait calls pending at once, daemon-wide. */
const MAX_WAITERS = 1000;

interface Waiter {
  port: number;
  resolve(entries: ListenEntry[] | undefined): void;
}

/**
 * The sandbox's listening TCP ports, the answer to ports.list and ports.wait, and the address the
 * preview proxy reaches a port at. The daemon's own sockets are left out.
 */
export class PortTable {
  private readonly waiters = new Set<Waiter>();
  private poll: NodeJS.Timeout | undefined;
  /** Listen-table readings, shared by every caller: lists, waits and their polls, the proxy's lookups. */
  private readonly table = new Shared(readListenTable);
  private readonly listing = new Shared(() => this.table.read().then((entries) => this.describe(entries)));

  /** Every listening port with its owner; concurrent calls share one reading and one scan of /proc. */
  list(): Promise<PortInfo[]> {
    return this.listing.read();
  }

  /** Resolves once something listens on `port`, or after `timeoutMs` with listening: false. */
  async wait(port: number, timeoutMs: number): Promise<{ listening: boolean; listeners: PortInfo[] }> {
    const found = await this.until(port, timeoutMs);
    if (!found) return { listening: false, listeners: [] };
    return { listening: true, listeners: await this.describe(found) };
  }

  /** Whether something listens on `port` now, or starts to within `timeoutMs` (without telling who). */
  async listening(port: number, timeoutMs: number): Promise<boolean> {
    return (await this.until(port, timeoutMs)) !== undefined;
  }

  /** The listeners on `port` once there are any, or undefined after `timeoutMs`. */
  private async until(port: number, timeoutMs: number): Promise<ListenEntry[] | undefined> {
    const now = (await this.table.read()).filter((e) => e.port === port);
    let found: ListenEntry[] | undefined = now.length ? now : undefined;
    if (!found && timeoutMs > 0) {
      if (this.waiters.size >= MAX_WAITERS)
        throw new ActionError("limit_exceeded", `${MAX_WAITERS} ports.wait calls are already waiting; wait for some to answer`);
      found = await new Promise<ListenEntry[] | undefined>((resolve) => {
        const waiter: Waiter = {
          port,
          resolve: (entries) => {
            clearTimeout(timer);
            this.waiters.delete(waiter);
            resolve(entries);
          },
        };
        const timer = setTimeout(() => waiter.resolve(undefined), timeoutMs);
        this.waiters.add(waiter);
        this.startPolling();
      });
    }
    return found;
  }

  /** The address to connect to for `port` now, or undefined when nothing listens there. */
  async address(port: number): Promise<string | undefined> {
    return connectAddress((await this.table.read()).filter((e) => e.port === port));
  }

  private async describe(entries: ListenEntry[]): Promise<PortInfo[]> {
    const owners = await socketOwners(new Set(entries.map((e) => e.inode)));
    const out: PortInfo[] = [];
    for (const { inode, ...entry } of entries) {
      const owner = owners.get(inode);
      if (owner?.pid === process.pid) continue;
      out.push({ ...entry, ...owner });
    }
    return out;
  }

  private startPolling(): void {
    if (this.poll) return;
    this.poll = setInterval(() => {
      void this.table
        .read()
        .then((entries) => {
          for (const w of [...this.waiters]) {
            const mine = entries.filter((e) => e.port === w.port);
            if (mine.length) w.resolve(mine);
          }
        })
        .catch(() => {})
        .finally(() => {
          if (this.waiters.size || !this.poll) return;
          clearInterval(this.poll);
          this.poll = undefined;
        });
    }, POLL_MS);
    this.poll.unref();
  }
}
