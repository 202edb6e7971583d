import fs from "node:fs/promises";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import type { Static, TObject } from "@sinclair/typebox";
import { ActionError } from "../../protocol/errors.js";
import type { LockWaitParams as LockWaitProperties } from "../../protocol/workspace.js";
import { KeyedMutex } from "../util/mutex.js";
import type { WorkContext } from "./git-helpers.js";
import { breakStaleLock, isStale, ownRecord, readLock, removeOwnLock, tryCreateLock, type LockRecord } from "./lock-file.js";

/**
 * One lock per repository. Inside the daemon, waiters queue first-in first-out on an in-memory
 * mutex (no polling); across processes, the holder also owns an O_EXCL lock file, and a process
 * that finds it taken polls with backoff until the holder releases it or is found dead. Every
 * wait has a deadline: a live holder that never lets go costs the waiter `conflict`, not forever.
 */

/** How long an action waits for a repository lock unless it passes `lockTimeoutMs`. */
export const DEFAULT_LOCK_TIMEOUT_MS = 30_000;

/** Who holds a lock, as far as a waiter can tell (from the lock file, or this process's own record). */
export type LockHolder = Pick<LockRecord, "pid" | "hostname" | "purpose" | "acquiredAt">;

export interface LockWaitInfo {
  /** Who held the lock when we started waiting (undefined when the wait was inside this process). */
  holder?: Pick<LockRecord, "pid" | "purpose" | "acquiredAt">;
}

export interface AcquireOptions {
  signal?: AbortSignal;
  /** Recorded in the lock file, shown to whoever waits ("tasks.commit fix-1"). */
  purpose: string;
  /** Called once when the lock is not free at once. */
  onWait?: (info: LockWaitInfo) => void;
  /** Longest wait before giving up with `conflict` naming the holder (default DEFAULT_LOCK_TIMEOUT_MS). */
  timeoutMs?: number;
}

/** The lock parameter of every action that takes a repository lock (`lockTimeoutMs`), as the protocol defines it. */
export type LockWaitParams = Static<TObject<typeof LockWaitProperties>>;

/** The lock options of every repository action: its purpose, its deadline, and a progress note while it waits. */
export function repoLockOptions(purpose: string, params: LockWaitParams, ctx: Pick<WorkContext, "signal" | "progress">): AcquireOptions {
  return {
    signal: ctx.signal,
    purpose,
    timeoutMs: params.lockTimeoutMs,
    onWait: () => ctx.progress?.({ phase: "waiting for repository lock" }),
  };
}

/** What a held lock reports; `waited`/`waitedMs` let callers and tests observe contention. */
export interface LockHandle {
  readonly key: string;
  readonly waited: boolean;
  readonly waitedMs: number;
  /** True when a dead holder's lock file was taken over to get this one. */
  readonly recoveredStale: boolean;
  release(): Promise<void>;
}

export interface LockStats {
  acquired: number;
  waited: number;
  totalWaitMs: number;
  maxWaitMs: number;
  staleRecovered: number;
}

const POLL_START_MS = 5;
const POLL_MAX_MS = 100;

/** The deadline's abort reason, told apart from the caller's own abort. */
const LOCK_TIMEOUT = new Error("repository lock wait timed out");

function lockTimeoutError(key: string, timeoutMs: number, holder: LockHolder | undefined): ActionError {
  const who = holder
    ? `pid ${holder.pid} on ${holder.hostname} (${holder.purpose}, holding it since ${holder.acquiredAt})`
    : "another process whose lock file cannot be read";
  return new ActionError(
    "conflict",
    `repository ${key} is locked by ${who}; gave up after ${timeoutMs} ms. Retry when it is done, pass a larger lockTimeoutMs, or stop that process`,
    { path: "/lockTimeoutMs", details: { repo: key, lockTimeoutMs: timeoutMs, ...(holder ? { holder } : {}) } },
  );
}

/** The per-repository locks of one workspace; `lockFileFor` maps a key to its lock file. */
export class RepoLocks {
  /** In-process waiters queue here, first in first out, before anyone looks at the lock file. */
  private readonly mutexes = new KeyedMutex();
  private readonly counters = new Map<string, LockStats>();
  /** This process's record for each key it holds, so an in-process waiter can name its holder. */
  private readonly holders = new Map<string, LockRecord>();

  constructor(private readonly lockFileFor: (key: string) => string) {}

  /**
   * Waits for the key's lock (in-process, then cross-process) and returns the held handle. Past
   * the deadline the wait ends with `conflict` naming the holder; the caller's own abort wins.
   */
  async acquire(key: string, options: AcquireOptions): Promise<LockHandle> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
    const deadline = new AbortController();
    const onCallerAbort = () => deadline.abort(options.signal?.reason);
    if (options.signal?.aborted) onCallerAbort();
    else options.signal?.addEventListener("abort", onCallerAbort, { once: true });
    const timer = setTimeout(() => deadline.abort(LOCK_TIMEOUT), timeoutMs);
    // Set while polling another process's lock file; before that, the holder is in this process.
    let fileHolder: LockHolder | undefined;
    try {
      return await this.acquireUntil(key, options, deadline.signal, (h) => (fileHolder = h));
    } catch (error) {
      if (error === LOCK_TIMEOUT) throw lockTimeoutError(key, timeoutMs, fileHolder ?? this.holders.get(key));
      throw error;
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onCallerAbort);
    }
  }

  private async acquireUntil(
    key: string,
    options: AcquireOptions,
    signal: AbortSignal,
    sawHolder: (h: LockHolder | undefined) => void,
  ): Promise<LockHandle> {
    const started = performance.now();
    let waited = this.mutexes.busy(key);
    let told = false;
    if (waited) {
      told = true;
      options.onWait?.({});
    }
    const unlock = await this.mutexes.lock(key, signal);
    const file = this.lockFileFor(key);
    const record = ownRecord(options.purpose);
    let recoveredStale = false;
    try {
      await fs.mkdir(path.dirname(file), { recursive: true });
      let pause = POLL_START_MS;
      const pauseOrEnd = async () => {
        await delay(pause, undefined, { signal }).catch((error: unknown) => {
          signal.throwIfAborted(); // surface the caller's reason (or the deadline), not a generic AbortError
          throw error;
        });
        pause = Math.min(pause * 2, POLL_MAX_MS);
      };
      while (!(await tryCreateLock(file, record))) {
        signal.throwIfAborted();
        const current = await readLock(file);
        if (!current) {
          // Released between our create and read; back off all the same, so a path that keeps
          // failing create while reading as absent can never spin without a deadline.
          await pauseOrEnd();
          continue;
        }
        if (isStale(current)) {
          if (await breakStaleLock(file, current.text)) recoveredStale = true;
          else await pauseOrEnd(); // another process is breaking it: give it time
          continue;
        }
        waited = true;
        sawHolder(
          current.record && {
            pid: current.record.pid,
            hostname: current.record.hostname,
            purpose: current.record.purpose,
            acquiredAt: current.record.acquiredAt,
          },
        );
        if (!told) {
          told = true;
          const h = current.record;
          options.onWait?.({ holder: h && { pid: h.pid, purpose: h.purpose, acquiredAt: h.acquiredAt } });
        }
        await pauseOrEnd();
      }
    } catch (error) {
      unlock();
      throw error;
    }
    const waitedMs = waited ? Math.max(1, Math.round(performance.now() - started)) : 0;
    this.count(key, waited, waitedMs, recoveredStale);
    this.holders.set(key, record);
    let released = false;
    return {
      key,
      waited,
      waitedMs,
      recoveredStale,
      release: async () => {
        if (released) return;
        released = true;
        this.holders.delete(key);
        try {
          await removeOwnLock(file, record);
        } finally {
          unlock();
        }
      },
    };
  }

  /** Runs fn while holding the key's lock, releasing it however fn ends. */
  async withLock<T>(key: string, options: AcquireOptions, fn: (lock: LockHandle) => Promise<T>): Promise<T> {
    const lock = await this.acquire(key, options);
    try {
      return await fn(lock);
    } finally {
      await lock.release();
    }
  }

  /** Contention counters for one key (zeros when never locked). */
  stats(key: string): LockStats {
    return { ...(this.counters.get(key) ?? { acquired: 0, waited: 0, totalWaitMs: 0, maxWaitMs: 0, staleRecovered: 0 }) };
  }

  private count(key: string, waited: boolean, waitedMs: number, recovered: boolean): void {
    const s = this.counters.get(key) ?? { acquired: 0, waited: 0, totalWaitMs: 0, maxWaitMs: 0, staleRecovered: 0 };
    s.acquired += 1;
    if (waited) {
      s.waited += 1;
      s.totalWaitMs += waitedMs;
      s.maxWaitMs = Math.max(s.maxWaitMs, waitedMs);
    }
    if (recovered) s.staleRecovered += 1;
    this.counters.set(key, s);
  }
}
