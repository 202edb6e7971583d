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

/** The synchronous stretches of one label measured since the watchdog last looked. */
interface Spans {
  ms: number;
  count: number;
  /** The longest of them, for its connection and request. */
  longest: Work;
  longestMs: number;
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
 * the reply's serialisation). A turn is blamed on the stretch (or stretches of one kind) that
 * filled half of it or more, else on what was in flight while it ran (an action's continuations after an await are not timed one by one).
 */
export class WorkTracker {
  private readonly inflight = new Set<Work>();
  private readonly recent: Work[] = [];
  private spans = new Map<string, Spans>();
  /** Time of the timed stretches nested in the one running now (see `timed`). */
  private nestedMs = 0;

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

  /**
   * Runs `fn` and records how long it held the thread, for `work`. A timed stretch inside another
   * (an HTTP route run by the front door's parser) counts for itself only: the outer one records
   * its own time without the inner's, so the turn is blamed on whichever did the work.
   */
  timed<T>(work: Work, fn: () => T): T {
    const started = performance.now();
    const outerNested = this.nestedMs;
    this.nestedMs = 0;
    try {
      return fn();
    } finally {
      const ms = performance.now() - started;
      this.spent(work, ms - this.nestedMs);
      this.nestedMs = outerNested + ms;
    }
  }

  /** Records a synchronous stretch of `ms` done for `work`. */
  spent(work: Work, ms: number): void {
    const spans = this.spans.get(work.label);
    if (!spans) this.spans.set(work.label, { ms, count: 1, longest: work, longestMs: ms });
    else {
      spans.ms += ms;
      spans.count++;
      if (ms > spans.longestMs) Object.assign(spans, { longest: work, longestMs: ms });
    }
  }

  /**
   * Names the likely cause of a turn of `delayMs` that ended now, the window having opened at
   * `since` (performance.now() of the previous check), and starts a new window.
   */
  blame(since: number, delayMs: number): Blame {
    const top = [...this.spans.values()].sort((a, b) => b.ms - a.ms)[0];
    this.spans.clear();
    if (top && top.ms >= delayMs / 2) {
      // One stretch, or many of the same kind in one turn (50 shell actions each spawning a process).
      if (top.count > 1 && top.longestMs < delayMs / 2) return { cause: `${top.longest.label} ×${top.count}` };
      return { cause: top.longest.label, conn: top.longest.conn, request: top.longest.request };
    }
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
    this.spans.clear();
  }
}

/** The daemon's one tracker: entry points anywhere mark their work here. */
export const work = new WorkTracker();

/** What an HTTP route looks like to the tracker (daemon/server's HttpRoute). */
interface Route {
  prefix: string;
  handle(req: IncomingMessage, res: ServerResponse, admit: () => void): void | Promise<void>;
}

/** Makes `route`'s requests tracked work, "http <prefix>", in flight until their response closes. */
export function trackRoute<R extends Route>(route: R): R {
  const handle = route.handle.bind(route);
  route.handle = (req, res, admit) => {
    const unit = work.begin(`http ${route.prefix}`);
    res.once("close", () => work.end(unit));
    return work.timed(unit, () => handle(req, res, admit));
  };
  return route;
}
