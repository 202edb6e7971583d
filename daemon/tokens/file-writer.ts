import { ActionError } from "../../protocol/errors.js";
import { writeFileDurable } from "../util/atomic-write.js";
import type { IssuedToken } from "./records.js";

/** What a waiter asked for: its failure says what became of its change. */
type Change = "create" | "revoke" | "retry";

/** Changes waiting for the next write of tokens.json, and the callers waiting for it to be durable. */
interface Batch {
  /** Tokens created in this batch: dropped again if its write fails, since nobody was given them. */
  created: IssuedToken[];
  waiters: Array<{ resolve: () => void; reject: (err: unknown) => void; change: Change }>;
}

/**
 * Writes tokens.json: at most one write in flight (off the event loop: a 1000-token file costs a
 * synchronous write and fsync of ~0.5 MB otherwise); changes made meanwhile wait for the next one,
 * which writes them all, so a burst of creates costs two writes, not one each. Each write is a
 * temporary file, fsynced, renamed over the old one, so after a crash the file is the old table or
 * the new, never a mix. A failed write is tried again after `retryMs` unless a change comes first.
 */
export class TokenFileWriter {
  /** Whether a write of tokens.json is in flight (at most one is). */
  private writing = false;
  /** The changes made since the write in flight began (or since the last one ended). */
  private pending: Batch | undefined;
  /** Writes of tokens.json started so far: a burst of changes shares one (tests read it). */
  writes = 0;

  /**
   * `snapshot` is the file's text as the table is now; `drop` takes back tokens whose create
   * failed to be saved.
   */
  constructor(
    private readonly path: string,
    private readonly snapshot: () => string,
    private readonly drop: (created: ReadonlySet<IssuedToken>) => void,
    private readonly retryMs: number,
  ) {}

  /** Resolves once tokens.json holds the table as it is now (with `created` among it, when given). */
  persist(created?: IssuedToken, retry = false): Promise<void> {
    this.pending ??= { created: [], waiters: [] };
    if (created) this.pending.created.push(created);
    const change: Change = created ? "create" : retry ? "retry" : "revoke";
    const done = new Promise<void>((resolve, reject) => this.pending!.waiters.push({ resolve, reject, change }));
    // Changes made in this turn join the write too: it starts in the next one.
    if (!this.writing) {
      this.writing = true;
      setImmediate(() => this.writeNext());
    }
    return done;
  }

  /** Resolves once every change made so far is in tokens.json (for shutdown). */
  async flush(): Promise<void> {
    if (this.writing || this.pending) await this.persist().catch(() => undefined);
  }

  private writeNext(): void {
    const batch = this.pending;
    this.pending = undefined;
    if (!batch) {
      this.writing = false;
      return;
    }
    this.writes++;
    writeFileDurable(this.path, this.snapshot()).then(
      () => {
        for (const w of batch.waiters) w.resolve();
        this.writeNext();
      },
      (err: NodeJS.ErrnoException) => {
        // Nobody was given these tokens: they must not hold. A revocation stays in force in
        // memory, and the file gets it with the next write: a later change's, or the retry's.
        if (batch.created.length) this.drop(new Set(batch.created));
        const why = `the token table could not be saved (${this.path}: ${err.code ?? err.message})`;
        const outcome: Record<Change, string> = {
          create: "the token was not issued; retry once the disk has room",
          revoke: `the token is revoked (refused from now on), but the file still has it; the daemon saves it again every ${this.retryMs / 1000} s`,
          retry: "",
        };
        for (const w of batch.waiters) w.reject(new ActionError("unavailable", `${why}: ${outcome[w.change]}`));
        if (!this.pending) setTimeout(() => void this.persist(undefined, true).catch(() => undefined), this.retryMs).unref();
        this.writeNext();
      },
    );
  }
}
