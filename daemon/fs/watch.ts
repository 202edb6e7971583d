import { watch as fsWatch, type FSWatcher } from "node:fs";
import { lstat, readdir, readFile } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { basename, dirname, join } from "node:path";
import type { FsChangeEvent } from "../../protocol/events.js";
import { ActionError } from "../../protocol/errors.js";
import { fsError } from "./errors.js";
import { isRefused, type FsPolicy } from "./policy.js";

/** Watches one connection may hold. */
export const MAX_WATCHES_PER_CONNECTION = 16;
/** Directories one recursive watch may cover (one inotify watch each). */
export const MAX_DIRS_PER_WATCH = 4096;
/** Changes within this window are coalesced into one event per path. */
export const COALESCE_MS = 50;
/** Distinct paths waiting in one window; past this the window is reported as one overflow event. */
const MAX_PENDING = 1000;

export interface WatchSink {
  send(frame: object): void;
  readonly writable: boolean;
}

type Kind = FsChangeEvent["kind"];

/**
 * The share of the user's inotify watches (fs.inotify.max_user_watches, shared by every process
 * of the user) that all watches of this daemon together may hold, so jobs keep the rest.
 */
export const WATCH_SHARE = 1 / 4;
/** Placed when /proc does not say: a quarter of the kernel's old default (8,192). */
const FALLBACK_BUDGET = 2048;
/** Directories placed per event-loop turn when a watch starts (one fs.watch is tens of µs). */
const PLACE_SLICE = 256;

/**
 * Watchers closed per event-loop turn. Closing one (inotify_rm_watch, then the handle's close
 * callback) costs about as much as placing one, and a connection that goes may hold 16 watches of
 * 4,096 directories: closed in one turn that was a 0.5 s stall on a loaded machine.
 */
const CLOSE_SLICE = 256;
/** Watchers of closed watches still to close, oldest first, one daemon-wide queue so closes never pile into one turn. */
const closing: FSWatcher[][] = [];
let closingAt = 0;

function closeSoon(watchers: FSWatcher[]): void {
  if (watchers.length === 0) return;
  closing.push(watchers);
  if (closing.length === 1) setImmediate(closeSlice);
}

function closeSlice(): void {
  for (let n = 0; n < CLOSE_SLICE && closing.length > 0; n++) {
    const batch = closing[0]!;
    batch[closingAt++]!.close();
    if (closingAt === batch.length) {
      closing.shift();
      closingAt = 0;
    }
  }
  if (closing.length > 0) setImmediate(closeSlice);
}

let budget: number | undefined;
async function watchBudget(): Promise<number> {
  if (budget === undefined) {
    const max = Number((await readFile("/proc/sys/fs/inotify/max_user_watches", "utf8").catch(() => "")).trim());
    budget = Number.isSafeInteger(max) && max > 0 ? Math.floor(max * WATCH_SHARE) : FALLBACK_BUDGET;
  }
  return budget;
}

/** Directories watched by any Watch of this daemon → how many hold it (libuv shares one inotify watch per directory). */
const held = new Map<string, number>();
function hold(path: string): void {
  held.set(path, (held.get(path) ?? 0) + 1);
}
function release(path: string): void {
  const n = (held.get(path) ?? 1) - 1;
  if (n === 0) held.delete(path);
  else held.set(path, n);
}

/**
 * A watch on a file or a directory tree. Each directory gets its own non-recursive fs.watch
 * (inotify); new subdirectories are added as they appear. Node 20's own recursive mode is not
 * used: on Linux it walks the whole tree synchronously at start (half a second for 10,000
 * files, all of it an event-loop stall). Bursts are coalesced per path; a window with too many
 * paths, or one the connection is too slow to take, becomes one `overflow` event.
 */
export class Watch {
  readonly id = `w${randomBytes(8).toString("hex")}`;
  private readonly watchers = new Map<string, FSWatcher>();
  private pending = new Map<string, boolean>(); // path → saw a rename (create or remove) in this window
  private overflow = false;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Watching one file: its directory is watched and only this name reported, so a replaced file stays watched. */
  private only: string | undefined;

  private constructor(
    readonly root: string,
    private readonly recursive: boolean,
    private readonly policy: FsPolicy,
    private readonly sink: WatchSink,
  ) {}

  /**
   * Starts a watch, placing every directory or none: a tree that would take the daemon past its
   * share of the user's inotify watches, or that the kernel refuses (ENOSPC), is `limit_exceeded`
   * with whatever was placed removed again — never a watch that silently misses directories.
   */
  static async start(policy: FsPolicy, root: string, recursive: boolean, sink: WatchSink): Promise<Watch> {
    const w = new Watch(root, recursive, policy, sink);
    const isDir = (await lstat(root)).isDirectory();
    let dirs: string[];
    if (isDir && recursive) {
      const found = await w.collectDirs(root, MAX_DIRS_PER_WATCH);
      if (found === undefined) {
        throw new ActionError(
          "limit_exceeded",
          `${root} holds more than ${MAX_DIRS_PER_WATCH} directories; watch a smaller tree or without recursive`,
          { path: "/path" },
        );
      }
      dirs = found;
    } else if (isDir) dirs = [root];
    else {
      w.only = basename(root);
      dirs = [dirname(root)];
    }
    const cap = await watchBudget();
    const adding = dirs.filter((d) => !held.has(d)).length;
    if (held.size + adding > cap) {
      throw new ActionError(
        "limit_exceeded",
        `watching ${root} needs ${adding} more inotify watches; this daemon holds ${held.size} of the ${cap} it may (a quarter of the user's fs.inotify.max_user_watches); files.unwatch something or watch a smaller tree`,
        { path: "/path", details: { needed: adding, held: held.size, budget: cap } },
      );
    }
    try {
      for (let i = 0; i < dirs.length; i++) {
        if (i > 0 && i % PLACE_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
        w.add(dirs[i]!, true);
      }
    } catch (err) {
      w.close();
      throw err;
    }
    return w;
  }

  /**
   * Ends the watch at once (no more events; its share of the budget is free for the next watch)
   * and closes its watchers over the next turns: the kernel holds them a little longer, within the
   * three quarters of max_user_watches left to others.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    for (const path of this.watchers.keys()) release(path);
    closeSoon([...this.watchers.values()]);
    this.watchers.clear();
    this.pending.clear();
  }

  /** Directories of a tree (links not followed, the daemon's own skipped), or undefined past `cap`. */
  private async collectDirs(root: string, cap: number): Promise<string[] | undefined> {
    const dirs = [root];
    for (let i = 0; i < dirs.length; i++) {
      const entries = await readdir(dirs[i]!, { withFileTypes: true }).catch(() => []);
      for (const e of entries) {
        if (!e.isDirectory()) continue;
        const path = join(dirs[i]!, e.name);
        if (isRefused(this.policy, path)) continue;
        if (dirs.length >= cap) return undefined;
        dirs.push(path);
      }
    }
    return dirs;
  }

  /**
   * Watches one directory. Placing a new one while the daemon is at its share, or when the
   * kernel refuses, throws `limit_exceeded` at start (`strict`) and is an overflow later.
   */
  private add(path: string, strict = false): void {
    if (this.closed || this.watchers.has(path)) return;
    const full = this.watchers.size >= MAX_DIRS_PER_WATCH || (!held.has(path) && held.size >= (budget ?? FALLBACK_BUDGET));
    if (full && !strict) return void this.note(this.root, true, true);
    let watcher: FSWatcher;
    try {
      if (full) throw Object.assign(new Error("watch budget reached"), { code: "ENOSPC" });
      watcher = fsWatch(path, { persistent: false }, (type, name) => {
        if (this.only !== undefined && name?.toString() !== this.only) return;
        this.note(name ? join(path, name.toString()) : path, type === "rename");
      });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") return; // gone before we got to it: its removal is reported by its parent
      if (!strict) return void this.note(this.root, true, true);
      if (code !== "ENOSPC" && code !== "EMFILE") throw fsError(err, path);
      throw new ActionError(
        "limit_exceeded",
        `no inotify watch left for ${path} (fs.inotify.max_user_watches is shared by all the user's processes); files.unwatch something or watch a smaller tree`,
        { path: "/path" },
      );
    }
    watcher.on("error", () => {
      watcher.close();
      if (this.watchers.delete(path)) release(path);
      this.note(path, true);
    });
    this.watchers.set(path, watcher);
    hold(path);
  }

  private note(path: string, renamed: boolean, overflow = false): void {
    if (this.closed || isRefused(this.policy, path)) return;
    if (overflow || (!this.pending.has(path) && this.pending.size >= MAX_PENDING)) this.overflow = true;
    else this.pending.set(path, (this.pending.get(path) ?? false) || renamed);
    this.timer ??= setTimeout(() => void this.flush(), COALESCE_MS);
  }

  private async flush(): Promise<void> {
    this.timer = undefined;
    const batch = this.pending;
    this.pending = new Map();
    const events: Array<{ path: string; kind: Kind }> = [];
    for (const [path, renamed] of batch) {
      const st = await lstat(path).catch(() => undefined);
      if (!renamed) events.push({ path, kind: st ? "modify" : "remove" });
      else events.push({ path, kind: st ? "create" : "remove" });
      if (this.recursive && st?.isDirectory() && renamed) {
        const dirs = await this.collectDirs(path, MAX_DIRS_PER_WATCH - this.watchers.size);
        if (dirs) for (const dir of dirs) this.add(dir);
        else this.overflow = true;
      }
      if (!st) for (const dir of [...this.watchers.keys()]) if (dir === path || dir.startsWith(`${path}/`)) this.drop(dir);
    }
    if (this.closed) return;
    if (!this.sink.writable) {
      this.overflow = this.overflow || events.length > 0;
      if (this.overflow) this.timer ??= setTimeout(() => void this.flush(), COALESCE_MS * 4);
      return;
    }
    if (this.overflow) {
      this.overflow = false;
      this.sink.send({ event: "fs.change", watch: this.id, path: this.root, kind: "overflow" } satisfies FsChangeEvent);
    }
    for (const e of events) this.sink.send({ event: "fs.change", watch: this.id, path: e.path, kind: e.kind } satisfies FsChangeEvent);
  }

  private drop(dir: string): void {
    if (dir === this.root || this.only !== undefined) return; // the root's own watcher ends with an error event, reported above
    this.watchers.get(dir)?.close();
    if (this.watchers.delete(dir)) release(dir);
  }
}
