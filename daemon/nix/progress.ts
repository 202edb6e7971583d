import type { ProgressUpdate } from "../runners/context.js";
import type { NixLogEvent } from "../runners/nix-cli.js";

// Codes of Nix's internal-json log (ActivityType for `start` lines, ResultType for `result`
// lines). The two enums reuse numbers (101 is fileTransfer and buildLogLine), so a line is
// dispatched on its `action` first, then on the code.
const ACT = { copyPath: 100, fileTransfer: 101, realise: 102, copyPaths: 103, builds: 104, build: 105, substitute: 108 } as const;
const RES = { buildLogLine: 101, setPhase: 104, progress: 105, setExpected: 106 } as const;

interface Activity {
  type: number;
  text: string;
  fields: Array<number | string>;
  done: number;
  expected: number;
  running: number;
  failed: number;
  expectedByType: Map<number, number>;
}
interface Totals {
  done: number;
  expected: number;
  failed: number;
}

/** Counters a client can show: Nix's own "[1/2/3 built, 0/1 copied (x/y MiB), z MiB DL]". */
export interface NixProgressSnapshot {
  builds: { done: number; expected: number; running: number; failed: number };
  substitutions: { done: number; expected: number; running: number; failed: number };
  narBytes: { done: number; expected: number };
  downloadBytes: { done: number; expected: number };
  step?: string;
}

const storeName = (path: string) => path.replace(/^\/nix\/store\/[a-z0-9]{32}-/, "").replace(/\.drv$/, "");

/**
 * Folds Nix activities into progress, with the same arithmetic as Nix's progress bar
 * (`progress-bar.cc::getStatus`): expected counts may shrink, finished activities move into totals.
 */
export class NixProgressTracker {
  private readonly acts = new Map<string, Activity>();
  private readonly byType = new Map<number, Totals>();
  private step: string | undefined;

  constructor(private readonly emit?: (update: ProgressUpdate) => void) {}

  private totals(type: number): Totals {
    let t = this.byType.get(type);
    if (!t) this.byType.set(type, (t = { done: 0, expected: 0, failed: 0 }));
    return t;
  }

  /** Feeds one log record; returns true when the counters or the step changed. */
  handle(event: NixLogEvent): boolean {
    switch (event.action) {
      case "start": {
        const fields = event.fields ?? [];
        this.acts.set(event.id, {
          type: event.type,
          text: event.text,
          fields,
          done: 0,
          expected: 0,
          running: 0,
          failed: 0,
          expectedByType: new Map(),
        });
        if (event.type === ACT.build) this.step = `building ${storeName(String(fields[0] ?? event.text))}`;
        else if (event.type === ACT.copyPath) this.step = `fetching ${storeName(String(fields[0] ?? event.text))}`;
        else return false;
        return true;
      }
      case "stop": {
        const act = this.acts.get(event.id);
        if (!act) return false;
        const t = this.totals(act.type);
        t.done += act.done;
        t.failed += act.failed;
        for (const [type, v] of act.expectedByType) this.totals(type).expected -= v;
        this.acts.delete(event.id);
        return act.type === ACT.builds || act.type === ACT.copyPaths || act.type === ACT.copyPath || act.type === ACT.fileTransfer;
      }
      case "result": {
        const act = this.acts.get(event.id);
        const f = event.fields ?? [];
        if (!act) return false;
        if (event.type === RES.progress) {
          [act.done, act.expected, act.running, act.failed] = [0, 1, 2, 3].map((i) => Number(f[i] ?? 0));
          return true;
        }
        if (event.type === RES.setExpected) {
          const type = Number(f[0]);
          const value = Number(f[1] ?? 0);
          this.totals(type).expected += value - (act.expectedByType.get(type) ?? 0);
          act.expectedByType.set(type, value);
          return true;
        }
        if (event.type === RES.setPhase && act.type === ACT.build) {
          this.step = `building ${storeName(String(act.fields[0] ?? ""))} (${String(f[0])})`;
          return true;
        }
        return false;
      }
      default:
        return false;
    }
  }

  private render(type: number) {
    const t = this.byType.get(type) ?? { done: 0, expected: 0, failed: 0 };
    let done = t.done;
    let expected = t.done;
    let running = 0;
    let failed = t.failed;
    for (const act of this.acts.values()) {
      if (act.type !== type) continue;
      done += act.done;
      expected += act.expected;
      running += act.running;
      failed += act.failed;
    }
    return { done, expected: Math.max(expected, t.expected), running, failed };
  }

  snapshot(): NixProgressSnapshot {
    const nar = this.render(ACT.copyPath);
    const dl = this.render(ACT.fileTransfer);
    return {
      builds: this.render(ACT.builds),
      substitutions: this.render(ACT.copyPaths),
      narBytes: { done: nar.done, expected: nar.expected },
      downloadBytes: { done: dl.done, expected: dl.expected },
      step: this.step,
    };
  }

  /** The job-level view: bytes while downloading, else builds; the message carries every counter. */
  update(): ProgressUpdate {
    const s = this.snapshot();
    const mib = (n: number) => (n / 1048576).toFixed(1);
    const parts = [`${s.builds.done}/${s.builds.expected} built`, `${s.substitutions.done}/${s.substitutions.expected} copied`];
    if (s.downloadBytes.expected > 0 || s.downloadBytes.done > 0)
      parts.push(`${mib(s.downloadBytes.done)}/${mib(s.downloadBytes.expected)} MiB DL`);
    const message = `[${parts.join(", ")}]${s.step ? ` ${s.step}` : ""}`;
    if (s.downloadBytes.expected > 0 && s.downloadBytes.done < s.downloadBytes.expected) {
      return { phase: "downloading", done: s.downloadBytes.done, total: s.downloadBytes.expected, unit: "bytes", message };
    }
    if (s.builds.expected > 0) return { phase: "building", done: s.builds.done, total: s.builds.expected, unit: "builds", message };
    if (s.substitutions.expected > 0)
      return { phase: "downloading", done: s.substitutions.done, total: s.substitutions.expected, unit: "paths", message };
    return { phase: "evaluating", message };
  }

  private lastEmit = 0;
  private lastPhase: string | undefined;
  private dirty = false;

  /**
   * Feeds an event and forwards a progress update when something changed: at once when the phase
   * changes (so a short download is still seen in bytes), otherwise at most every `intervalMs`.
   */
  feed(event: NixLogEvent, intervalMs = 100): void {
    if (!this.handle(event)) return;
    this.dirty = true;
    const now = Date.now();
    if (now - this.lastEmit >= intervalMs || this.update().phase !== this.lastPhase) this.flush(now);
  }

  /** Sends the latest counters if they changed since the last update. */
  flush(now = Date.now()): void {
    if (!this.dirty || !this.emit) return;
    this.dirty = false;
    this.lastEmit = now;
    const update = this.update();
    this.lastPhase = update.phase;
    this.emit(update);
  }
}
