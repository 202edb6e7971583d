import { randomUUID } from "node:crypto";
import { constants } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import { ActionError } from "../../protocol/errors.js";
import { isSameProcess, pidAlive, processStartTicks } from "../process/index.js";

/**
 * A lock file created with O_EXCL that holds against other processes on this machine. The file
 * records who holds it (pid, that process's start time, host, a nonce); a holder that died —
 * its pid gone, or reused by a process with another start time — is detected and the lock is
 * taken over, so a crash never wedges a repository.
 */

export interface LockRecord {
  pid: number;
  /** Kernel start time of the holder (clock ticks since boot); tells a reused pid apart. */
  startTime: string | null;
  hostname: string;
  acquiredAt: string;
  purpose: string;
  nonce: string;
}

/** Why a lock file's holder is considered gone (or "alive"). */
export type HolderState = "alive" | "dead" | "reused-pid" | "unreadable";

const ownStartTime = processStartTicks(process.pid);

/** A fresh record for this process. */
export function ownRecord(purpose: string): LockRecord {
  return {
    pid: process.pid,
    startTime: ownStartTime,
    hostname: os.hostname(),
    acquiredAt: new Date().toISOString(),
    purpose,
    nonce: randomUUID(),
  };
}

/** Judges whether the holder named in a lock file still exists. */
export function holderState(record: LockRecord | undefined): HolderState {
  if (!record) return "unreadable";
  if (record.hostname !== os.hostname()) return "alive"; // cannot judge another machine's pids: never steal
  if (!pidAlive(record.pid)) return "dead";
  if (record.startTime !== null && !isSameProcess(record.pid, record.startTime)) return "reused-pid";
  return "alive";
}

/** Parses a lock file's text; undefined when it is empty or torn. */
export function parseRecord(text: string): LockRecord | undefined {
  try {
    const value = JSON.parse(text) as LockRecord;
    return typeof value.pid === "number" && typeof value.nonce === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Tries once to create the lock file; true when this call now holds it. */
export async function tryCreateLock(file: string, record: LockRecord): Promise<boolean> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, "wx", 0o644);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
  try {
    // No fsync: the record only matters while its holder lives; after a machine crash a torn or
    // empty file is judged stale by age (see isStale).
    await handle.writeFile(`${JSON.stringify(record)}\n`);
  } finally {
    await handle.close();
  }
  return true;
}

/** Longer than any record this module writes; a bigger file at the lock path is not ours. */
const MAX_LOCK_BYTES = 64 * 1024;

function notALockFile(file: string, what: string): ActionError {
  return new ActionError("conflict", `${file} is ${what}, not a lock file; remove it and retry`, {
    details: { lockFile: file },
  });
}

/**
 * Reads the lock file; undefined when it does not exist. Only a regular file counts: a symlink
 * (dangling ones make create fail and read find nothing, forever), a FIFO (a blocking read holds
 * a libuv thread) or anything else at the path is refused with `conflict` naming it.
 */
export async function readLock(file: string): Promise<{ text: string; record: LockRecord | undefined; ageMs: number } | undefined> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    if (code === "ELOOP") throw notALockFile(file, "a symbolic link");
    throw error;
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw notALockFile(file, "not a regular file");
    if (stat.size > MAX_LOCK_BYTES) throw notALockFile(file, `larger than ${MAX_LOCK_BYTES} bytes`);
    const text = await handle.readFile("utf8");
    return { text, record: parseRecord(text), ageMs: Date.now() - stat.mtimeMs };
  } finally {
    await handle.close();
  }
}

/** A torn record (crash between create and write) counts as stale only after this long. */
const TORN_GRACE_MS = 2_000;
/** A breaker file left by a crash during takeover is ignored after this long. */
const BREAKER_STALE_MS = 10_000;

/**
 * Removes a stale lock file, but only if it still holds exactly the stale text we judged: a
 * `.break` side file (O_EXCL) makes the re-read-and-unlink step exclusive, so two processes
 * breaking the same stale lock can never delete a fresh lock the other one just took.
 */
export async function breakStaleLock(file: string, staleText: string): Promise<boolean> {
  const breaker = `${file}.break`;
  if (!(await tryCreateLock(breaker, ownRecord("break stale lock")))) {
    const existing = await readLock(breaker);
    if (existing && existing.ageMs > BREAKER_STALE_MS) await fs.rm(breaker, { force: true });
    return false;
  }
  try {
    const current = await readLock(file);
    if (!current || current.text !== staleText) return false;
    await fs.rm(file, { force: true });
    return true;
  } finally {
    await fs.rm(breaker, { force: true });
  }
}

/** Whether a lock file read from disk may be taken over. */
export function isStale(read: { record: LockRecord | undefined; ageMs: number }): boolean {
  const state = holderState(read.record);
  if (state === "unreadable") return read.ageMs > TORN_GRACE_MS;
  return state !== "alive";
}

/** Deletes the lock file if it is still ours (someone may have wrongly broken it). */
export async function removeOwnLock(file: string, record: LockRecord): Promise<void> {
  const current = await readLock(file);
  if (current?.record?.nonce === record.nonce) await fs.rm(file, { force: true });
}
