import type { ProgressUpdate, RunContext } from "./context.js";

/**
 * Rate-limits byte-progress reports: a download or an extraction produces thousands of chunks a
 * second, and every report fans out to followers, so at most one report per interval is sent
 * (plus a forced one at the end).
 */
export interface ThrottledProgress {
  update(done: number, total?: number | null): void;
  flush(): void;
}

/** Makes a throttled reporter for one phase of a runner's work. */
export function throttledProgress(ctx: Pick<RunContext, "progress">, phase: string, unit = "bytes", intervalMs = 200): ThrottledProgress {
  let last = 0;
  let pending: ProgressUpdate | null = null;
  const send = (u: ProgressUpdate) => {
    last = Date.now();
    pending = null;
    ctx.progress(u);
  };
  return {
    update(done, total) {
      const u: ProgressUpdate = { phase, unit, done };
      if (total !== undefined) u.total = total;
      if (Date.now() - last >= intervalMs) send(u);
      else pending = u;
    },
    flush() {
      if (pending) send(pending);
    },
  };
}
