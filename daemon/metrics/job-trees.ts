import { closeSync, openSync } from "node:fs";
import {
  CLOCK_TICKS,
  eachInFlight,
  markedJob,
  PROC_READS_IN_FLIGHT,
  type ProcUsage,
  pidAlive,
  readUsage,
  readUsageAt,
} from "../process/index.js";
import { openFileLimit } from "../util/descriptors.js";
import { listPids, type Slicer } from "./slices.js";

/** A running process job as the sampler tracks it: its id and its main process (the daemon's child). */
export interface TreeRoot {
  id: string;
  pid: number;
  /** When the job started (ms since the epoch): how long a job no pass has seen can have used CPU. */
  startedAt: number;
}

/** What a job's processes use, in the kernel's units. */
export interface TreeUsage {
  /** CPU of every process of the job so far, ended ones included (clock ticks). */
  cpuTicks: number;
  /** Resident pages of its live processes together. */
  rssPages: number;
  /** The most rssPages was at any sample. */
  peakPages: number;
  /** Its live processes. */
  processes: number;
}

/** Processes tracked at most, the job's and the others together: what a fork bomb can make the sampler hold. */
export const MAX_TRACKED = 65_536;
/** A job's processes read again at its end, at most (synchronously, in its finish); the rest keep their last sample. */
const FINAL_READS = 64;
/**
 * Descriptors kept open on tracked processes' /proc/<pid>/stat (a pread instead of open, read and
 * close: a third of a pass's cost): at most an eighth of the open-file limit, and 512.
 */
const MAX_STAT_FDS = Math.max(0, Math.min(512, Math.floor((openFileLimit() ?? 1024) / 8)));
/**
 * A job whose processes used no CPU and stayed the same for this many passes is quiet: its
 * processes are read every QUIET_EVERY-th pass only (a sleeping process's memory cannot grow:
 * faulting pages in takes CPU), unless one is born or gone. A hundred idle jobs cost a quarter.
 */
const QUIET_PASSES = 2;
const QUIET_EVERY = 4;

/** One process of a job, as last read. */
interface Proc {
  pid: number;
  /** Its start time, the second half of its identity (a reused pid starts later). */
  start: string;
  /** The same as a number: parents sort before their children. */
  startOrder: number;
  tree: Tree;
  ppid: number;
  /** Its own CPU, and that of the children it has waited for (clock ticks). */
  own: number;
  child: number;
  rss: number;
  /** The pass whose listing last showed it. */
  seen: number;
  /** A descriptor open on its /proc/<pid>/stat, while the budget allows. */
  fd: number | undefined;
}

/** One job's processes and what they used. */
class Tree {
  readonly members = new Set<Proc>();
  /** CPU of processes gone whose time no live process of the job holds (orphans the init process reaped). */
  departed = 0;
  /** What the main process's exit added to the daemon's children's CPU total (its whole subtree), once known. */
  rootFinal: number | undefined;
  rootExited = false;
  /** Whether the main process's time is in `departed` already. */
  rootCounted = false;
  usage: TreeUsage = { cpuTicks: 0, rssPages: 0, peakPages: 0, processes: 0 };
  /** Passes in a row that found its CPU and processes unchanged; `joined`: a process joined it in this pass. */
  quiet = 0;
  joined = false;
  /** CPU ticks per ms over the last pass, to tell its own last moments from another job's. */
  rate = 0;
  /** When a pass last totalled it (performance.now()); undefined before the first. */
  lastPassAt: number | undefined;

  constructor(
    readonly id: string,
    readonly rootPid: number,
    readonly startedAt: number,
  ) {}

  /** Milliseconds since it was last totalled, or since the job started when no pass has seen it. */
  unseenMs(now: number): number {
    return this.lastPassAt !== undefined ? now - this.lastPassAt : Math.max(0, Date.now() - this.startedAt);
  }

  /** Ticks of its live members (own + waited-for children) other than the main process. */
  descendantsTicks(): number {
    let sum = 0;
    for (const p of this.members) if (p.pid !== this.rootPid) sum += p.own + p.child;
    return sum;
  }

  rootProc(): Proc | undefined {
    for (const p of this.members) if (p.pid === this.rootPid) return p;
    return undefined;
  }
}

/**
 * Every running process job's process tree, found in /proc and sampled in slices: each process
 * the job's main process forked (by parent pid), and each that left the tree but carries the job's
 * AGENT_JOB_ID (an orphan of `setsid -f` or a double fork, read once from its environ). CPU is
 * summed so that nothing counts twice: a process's `child` ticks hold the children it waited for,
 * so a child that is gone counts through its parent; one the init process reaped instead counts
 * with what it had used when last seen. The main process's own end is exact: the CPU the kernel
 * adds to the daemon's children's total when the daemon reaps it (rootExited).
 *
 * Cost per pass: one directory read of /proc, one stat read per process of a job (of a quiet job,
 * every QUIET_EVERY-th pass), and for a process never seen before a stat read (and, unless its
 * parent is known, an environ read); processes that are no job's are remembered by pid while they
 * stay listed.
 */
export class JobTrees {
  private readonly trees = new Map<string, Tree>();
  private readonly byRootPid = new Map<number, Tree>();
  private readonly procs = new Map<number, Proc>();
  /** Processes that are no job's: pid → the pass that last listed them. */
  private readonly others = new Map<number, number>();
  private pass = 0;
  private statFds = 0;
  /** The daemon's children's CPU total when last read, and what of it no job has taken yet. */
  private selfSeen: number | undefined;
  private pool = 0;
  /** Where a job's orphans are reparented: pid 1 and the daemon's ancestors (a subreaper among them). */
  private readonly reapers: Set<number>;

  /** `cores`: how many CPUs the sandbox may use (bounds what a job can have used since its last sample). */
  constructor(private readonly cores: () => number) {
    this.reapers = ancestors();
    this.selfSeen = readUsage("self")?.childTicks;
  }

  /** Processes in the sandbox at the last pass (all of /proc). */
  processes = 0;

  /**
   * One pass over the running jobs `roots`: lists /proc, classifies new processes, reads every
   * job process, and returns each job's usage. Slices yield to the event loop (see Slicer).
   */
  async sample(roots: readonly TreeRoot[], slicer: Slicer): Promise<Map<string, TreeUsage>> {
    const pass = ++this.pass;
    this.track(roots);
    // What the daemon's children used since the last look and no exit took: children that are no
    // job's (git, nix), or a terminal's main process reaped by node-pty's thread whose exit is yet to
    // be told. Kept for this pass only.
    const self = readUsage("self")?.childTicks;
    if (self !== undefined) {
      this.pool = this.selfSeen === undefined ? 0 : Math.max(0, self - this.selfSeen);
      this.selfSeen = self;
    }
    const listed = await listPids(slicer, MAX_TRACKED, this.processes || undefined);
    this.processes = listed.total;
    const fresh: number[] = [];
    for (const pid of listed.pids) {
      const proc = this.procs.get(pid);
      if (proc) proc.seen = pass;
      else if (this.others.has(pid)) this.others.set(pid, pass);
      else fresh.push(pid);
    }
    const unresolved: Array<{ pid: number; u: ProcUsage }> = [];
    for (const pid of fresh) {
      const u = this.classify(pid, pass);
      if (u) unresolved.push({ pid, u });
      const pause = slicer.check();
      if (pause) await pause;
    }
    if (unresolved.length > 0) {
      // Environs are read on the thread pool (see readProcFile): what runs meanwhile is not the sampler's.
      slicer.pause();
      const marks = new Map<number, string | undefined>();
      await eachInFlight(unresolved, PROC_READS_IN_FLIGHT, async ({ pid }, slot) => void marks.set(pid, await markedJob(pid, slot)));
      slicer.resume();
      for (const { pid, u } of unresolved) this.adopt(pid, u, marks.get(pid), pass);
    }
    for (const [pid, seen] of this.others) if (seen !== pass) this.others.delete(pid);
    const out = new Map<string, TreeUsage>();
    for (const tree of [...this.trees.values()]) {
      if (this.quietNow(tree, pass)) {
        out.set(tree.id, tree.usage);
        continue;
      }
      const departedHere = new Map<number, Tree>();
      const members = tree.members.size > 1 ? [...tree.members].sort(byStart) : [...tree.members];
      // Parents before children: a child reaped between the two reads then shows in neither, never in both.
      for (const proc of members) {
        if (this.trees.get(tree.id) !== tree) break; // the job ended meanwhile (final took it)
        if (proc.seen !== pass || !this.refresh(proc)) this.depart(proc, departedHere);
        const pause = slicer.check();
        if (pause) await pause;
      }
      if (this.trees.get(tree.id) !== tree) continue;
      out.set(tree.id, this.total(tree));
    }
    return out;
  }

  /** Whether a quiet job's processes can go unread in this pass: none joined or left, and it is not their turn. */
  private quietNow(tree: Tree, pass: number): boolean {
    const joined = tree.joined;
    tree.joined = false;
    if (tree.quiet < QUIET_PASSES || joined || pass % QUIET_EVERY === 0 || tree.members.size === 0) return false;
    for (const proc of tree.members) if (proc.seen !== pass) return false;
    return true;
  }

  /**
   * The job's main process has just exited and been reaped (called synchronously from its exit):
   * the kernel has added its CPU, and that of every descendant it waited for, to the daemon's
   * children's total. Processes reaped together are told one by one; when the growth is more than
   * this job can have used, the other jobs whose main process is already gone share it.
   */
  rootExited(root: TreeRoot): void {
    const self = readUsage("self")?.childTicks;
    if (self === undefined) return;
    if (this.selfSeen !== undefined) this.pool += Math.max(0, self - this.selfSeen);
    this.selfSeen = self;
    const tree = this.trees.get(root.id) ?? this.addTree(root);
    if (tree.rootExited) return; // its share was taken when another job of its batch exited
    const now = performance.now();
    const estimate = (t: Tree) => {
      const rootProc = t.rootProc();
      const base = rootProc ? rootProc.own + rootProc.child : 0;
      const elapsedMs = t.unseenMs(now);
      const descendants = t.descendantsTicks();
      return {
        tree: t,
        base,
        expected: t.rate * elapsedMs + descendants,
        bound: base + descendants + (elapsedMs / 1000) * CLOCK_TICKS * this.cores() + 2,
      };
    };
    const mine = estimate(tree);
    const members = [mine];
    if (this.pool > mine.base + mine.expected * 1.25 + 5) {
      for (const other of this.trees.values())
        if (other !== tree && !other.rootExited && !pidAlive(other.rootPid)) members.push(estimate(other));
    }
    const excess = Math.max(0, this.pool - members.reduce((sum, m) => sum + m.base, 0));
    const weights = members.reduce((sum, m) => sum + Math.max(1, m.expected), 0);
    for (const m of members) {
      const share = m.base + (excess * Math.max(1, m.expected)) / weights;
      const final = Math.max(m.base, Math.min(share, m.bound));
      m.tree.rootExited = true;
      m.tree.rootFinal = final;
      this.pool = Math.max(0, this.pool - final);
    }
  }

  /**
   * The job ended: its usage as of now (its processes still alive read once more, up to
   * FINAL_READS of them), and it is no longer tracked. Undefined for a job never tracked.
   */
  final(id: string): TreeUsage | undefined {
    const tree = this.trees.get(id);
    if (!tree) return undefined;
    const departedHere = new Map<number, Tree>();
    let reads = 0;
    for (const proc of [...tree.members].sort(byStart)) {
      if (reads++ >= FINAL_READS) break;
      if (!this.refresh(proc)) this.depart(proc, departedHere);
    }
    const usage = this.total(tree);
    this.drop(tree);
    return usage;
  }

  /** Jobs no longer running are forgotten (their processes become "unknown" and are classified again). */
  private track(roots: readonly TreeRoot[]): void {
    const running = new Set<string>();
    for (const root of roots) {
      running.add(root.id);
      if (!this.trees.has(root.id)) this.addTree(root);
    }
    for (const tree of [...this.trees.values()]) if (!running.has(tree.id) && !tree.rootExited) this.drop(tree);
  }

  private addTree(root: TreeRoot): Tree {
    const tree = new Tree(root.id, root.pid, root.startedAt);
    this.trees.set(root.id, tree);
    this.byRootPid.set(root.pid, tree);
    return tree;
  }

  private drop(tree: Tree): void {
    if (this.trees.get(tree.id) === tree) this.trees.delete(tree.id);
    if (this.byRootPid.get(tree.rootPid) === tree) this.byRootPid.delete(tree.rootPid);
    for (const proc of tree.members) {
      this.closeStat(proc);
      if (this.procs.get(proc.pid) === proc) this.procs.delete(proc.pid);
    }
    tree.members.clear();
  }

  /** A process first listed: a job's (its main process, a child of one, or marked) or another. */
  /**
   * A process first listed: a job's (its main process, or a child of one of its processes) or, the
   * child of a process that is no job's, another's. Else its environ decides: its stat is returned
   * for `adopt` once the marker has been read.
   */
  private classify(pid: number, pass: number): ProcUsage | undefined {
    if (pid === process.pid) return void this.others.set(pid, pass);
    const u = readUsage(pid);
    if (!u) return undefined; // gone already
    const tree = this.byRootPid.get(pid) ?? this.procs.get(u.ppid)?.tree;
    if (tree) return void this.track1(pid, u, tree, pass);
    // The child of a process that is no job's is no job's either, unless its parent is where orphans go.
    if (u.ppid !== process.pid && this.others.has(u.ppid) && !this.reapers.has(u.ppid)) return void this.others.set(pid, pass);
    return u;
  }

  /** A process whose environ was read: the job it is marked with, if that job is tracked; else another's. */
  private adopt(pid: number, u: ProcUsage, jobId: string | undefined, pass: number): void {
    if (jobId === undefined) return void this.others.set(pid, pass);
    const tree = this.trees.get(jobId);
    if (tree) this.track1(pid, u, tree, pass); // else a job not tracked (yet, or any more): looked at again next pass
  }

  /** Tracks a process of a job. */
  private track1(pid: number, u: ProcUsage, tree: Tree, pass: number): void {
    if (this.procs.size + this.others.size >= MAX_TRACKED) return;
    const fd = this.openStat(pid, u.startTicks);
    const proc: Proc = {
      pid,
      start: u.startTicks,
      startOrder: Number(u.startTicks),
      tree,
      ppid: u.ppid,
      own: u.ownTicks,
      child: u.childTicks,
      rss: u.rssPages,
      seen: pass,
      fd,
    };
    this.procs.set(pid, proc);
    tree.members.add(proc);
    tree.joined = true;
  }

  /** A descriptor on the process's stat that reads that process (its start time checked), or undefined. */
  private openStat(pid: number, startTicks: string): number | undefined {
    if (this.statFds >= MAX_STAT_FDS) return undefined;
    let fd: number;
    try {
      fd = openSync(`/proc/${pid}/stat`, "r");
    } catch {
      return undefined;
    }
    if (readUsageAt(fd)?.startTicks !== startTicks) {
      closeSync(fd);
      return undefined;
    }
    this.statFds++;
    return fd;
  }

  private closeStat(proc: Proc): void {
    if (proc.fd === undefined) return;
    try {
      closeSync(proc.fd);
    } catch {
      // already closed
    }
    proc.fd = undefined;
    this.statFds--;
  }

  /** Reads a tracked process again; false when it is gone (or its pid now names another process). */
  private refresh(proc: Proc): boolean {
    const u = proc.fd !== undefined ? readUsageAt(proc.fd) : readUsage(proc.pid);
    if (!u || u.startTicks !== proc.start) return false;
    proc.ppid = u.ppid;
    // A zombie's own times stay; its RSS is gone.
    proc.own = Math.max(proc.own, u.ownTicks);
    proc.child = Math.max(proc.child, u.childTicks);
    proc.rss = u.rssPages;
    return true;
  }

  /**
   * A process of the job is gone. Its parent (in the job, gone in this same pass or still there)
   * waited for it, so its CPU is in the parent's `child` ticks, or for the main process in what its
   * exit added to the daemon's; one whose parent was outside the job (an orphan reaped by init)
   * adds what it had used when last read.
   */
  private depart(proc: Proc, departedHere: Map<number, Tree>): void {
    const tree = proc.tree;
    this.closeStat(proc);
    tree.members.delete(proc);
    if (this.procs.get(proc.pid) === proc) this.procs.delete(proc.pid);
    departedHere.set(proc.pid, tree);
    if (proc.pid === tree.rootPid) {
      tree.departed += Math.max(tree.rootFinal ?? 0, proc.own + proc.child);
      tree.rootCounted = true;
      return;
    }
    const parentInJob = proc.ppid === tree.rootPid || this.procs.get(proc.ppid)?.tree === tree || departedHere.get(proc.ppid) === tree;
    if (!parentInJob) tree.departed += proc.own + proc.child;
  }

  /** The job's usage now; CPU and peak never go down. */
  private total(tree: Tree): TreeUsage {
    let cpu = tree.departed;
    if (!tree.rootCounted && tree.rootFinal !== undefined && !tree.rootProc()) {
      // The main process ended before any pass saw it: its exit is all there is of it.
      tree.departed += tree.rootFinal;
      tree.rootCounted = true;
      cpu = tree.departed;
    }
    let rss = 0;
    for (const p of tree.members) {
      cpu += p.own + p.child;
      rss += p.rss;
    }
    const now = performance.now();
    const previous = tree.usage;
    const cpuTicks = Math.max(previous.cpuTicks, cpu);
    const since = tree.unseenMs(now);
    if (since > 0) tree.rate = (cpuTicks - previous.cpuTicks) / since;
    tree.lastPassAt = now;
    tree.quiet = cpuTicks === previous.cpuTicks && tree.members.size === previous.processes ? tree.quiet + 1 : 0;
    tree.usage = { cpuTicks, rssPages: rss, peakPages: Math.max(previous.peakPages, rss), processes: tree.members.size };
    return tree.usage;
  }
}

const byStart = (a: Proc, b: Proc): number => a.startOrder - b.startOrder;

/** Pid 1 and every ancestor of the daemon: the processes a job's orphans can be reparented to. */
function ancestors(): Set<number> {
  const found = new Set<number>([1]);
  let pid = process.ppid;
  for (let hops = 0; pid > 1 && hops < 64 && !found.has(pid); hops++) {
    found.add(pid);
    pid = readUsage(pid)?.ppid ?? 0;
  }
  return found;
}
