import type { IncomingMessage, ServerResponse } from "node:http";

/** One unit of work the main thread does for someone: an action, an HTTP request, a job's output. */
export interface Work {
  /** What it is: "action files.edit", "http /mcp", "job output j12". Never a parameter's value. */
  label: string;
  /** The connection and request it serves, when it has them. */
  conn?: string;
  request?: string | number;
  endedAt?: number;
}

/** The longest synchronous stretch measured since the watchdog last looked. */
interface Span {
  work: Work;
  ms: number;
}

/** Who a late turn is blamed on, as the watchdog logs it. */
export interface Blame {
  cause: string;
  conn?: string;
  request?: string | number;
  /** Everything else that was in flight during the turn (labels), when the cause is a guess. */
  inflight?: string[];
}

const RECENT = 8;
const LISTED = 5;

/**
 * What the main thread is working on, so a late event-loop turn can be blamed on something
 * without async hooks (which would tax every promise). Entry points mark their work: the
 * dispatcher an action from frame to reply, HTTP routes a request until its response closes, jobs
 * their output callbacks; each times its synchronous stretches (a handler up to its first await,
 * the reply's serialisation). A turn is blamed on the stretch that filled most of it, else on what
 * was in flight while it ran (an action's continuations after an await are not timed one by one).
 */
export class WorkTracker {
  private readonly inflight = new Set<Work>();
  private readonly recent: Work[] = [];
  private longest: Span | undefined;

  /** Marks the start of a unit of work; `end` it exactly once. */
  begin(label: string, conn?: string, request?: string | number): Work {
    const work: Work = { label, conn, request };
    this.inflight.add(work);
    return work;
  }

  end(work: Work): void {
    if (!this.inflight.delete(work)) return;
    work.endedAt = performance.now();
    this.recent.push(work);
    if (this.recent.length > RECENT) this.recent.shift();
  }

  /** Runs `fn` and records how long it held the thread, for `work`. */
  timed<T>(work: Work, fn: () => T): T {
    const started = performance.now();
    try {
      return fn();
    } finally {
      this.spent(work, performance.now() - started);
    }
  }

  /** Records a synchronous stretch of `ms` done for `work`. */
  spent(work: Work, ms: number): void {
    if (!this.longest || ms > this.longest.ms) this.longest = { work, ms };
  }

  /**
   * Names the likely cause of a turn of `delayMs` that ended now, the window having opened at
   * `since` (performance.now() of the previous check), and starts a new window.
   */
  blame(since: number, delayMs: number): Blame {
    const longest = this.longest;
    this.longest = undefined;
    if (longest && longest.ms >= delayMs / 2) return { cause: longest.work.label, conn: longest.work.conn, request: longest.work.request };
    const active = [...this.inflight, ...this.recent.filter((w) => (w.endedAt ?? 0) >= since)];
    if (active.length === 1) return { cause: `${active[0]!.label} (in flight)`, conn: active[0]!.conn, request: active[0]!.request };
    if (active.length > 1) {
      const labels = [...new Set(active.map((w) => w.label))].slice(0, LISTED);
      return { cause: `one of: ${labels.join(", ")}`, inflight: labels };
    }
    const last = this.recent.slice(-3).map((w) => w.label);
    return { cause: last.length ? `unknown: last ${last.join(", ")}` : "unknown: nothing tracked ran" };
  }

  /** Forgets the current window (the watchdog saw a punctual turn). */
  reset(): void {
    this.longest = undefined;
  }
}

/** The daemon's one tracker: entry points anywhere mark their work here. */
export const work = new WorkTracker();

/** What an HTTP route looks like to the tracker (daemon/server's HttpRoute). */
interface Route {
  prefix: string;
  handle(req: IncomingMessage, res: ServerResponse): void | Promise<void>;
}

/** Makes `route`'s requests tracked work, "http <prefix>", in flight until their response closes. */
export function trackRoute<R extends Route>(route: R): R {
  const handle = route.handle.bind(route);
  route.handle = (req, res) => {
    const unit = work.begin(`http ${route.prefix}`);
    res.once("close", () => work.end(unit));
    return work.timed(unit, () => handle(req, res));
  };
  return route;
}
