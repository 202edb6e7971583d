import { closeSync, existsSync, ftruncateSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync, writeSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "pino";
import type { JobRecord } from "./job.js";
import { SpareDirs } from "./spare-dirs.js";

/** Journal lines beyond this many per live record trigger a compaction into the snapshot. */
const COMPACT_FACTOR = 4;
const COMPACT_MIN_LINES = 2000;

type JournalLine = JobRecord | { evicted: string };

/**
 * Job records on disk: an append-only journal (`journal.jsonl`, one JSON line per change, the
 * newest line of a job wins) folded now and then into `snapshot.json`. An append is one write to
 * an open file, cheap and synchronous, so a record is on disk before anyone hears of the change.
 * Creating files is what costs here (~0.8 ms each), so output directories come from SpareDirs.
 */
export class JobStore {
  private readonly journalPath: string;
  private readonly snapshotPath: string;
  private journal: number;
  private lines = 0;
  private torn = false;
  private readonly live = new Map<string, JobRecord>();
  readonly spares: SpareDirs;

  constructor(
    readonly dir: string,
    private readonly log: Logger,
    outputFiles: readonly string[],
  ) {
    mkdirSync(dir, { recursive: true });
    this.journalPath = join(dir, "journal.jsonl");
    this.snapshotPath = join(dir, "snapshot.json");
    this.journal = openSync(this.journalPath, "a");
    this.spares = new SpareDirs(join(dir, ".spare"), outputFiles, log);
  }

  jobDir(id: string): string {
    return join(this.dir, id);
  }

  /** The newest record of every job kept: the snapshot, then the journal replayed over it. */
  loadAll(): JobRecord[] {
    if (existsSync(this.snapshotPath)) {
      try {
        for (const record of JSON.parse(readFileSync(this.snapshotPath, "utf8")) as JobRecord[]) this.live.set(record.id, record);
      } catch (err) {
        this.log.error({ err }, "snapshot.json is unreadable; replaying the journal alone");
      }
    }
    const journal = readFileSync(this.journalPath, "utf8");
    // A crash mid-write left a torn last line: the next line must not be glued onto it.
    if (journal.length > 0 && !journal.endsWith("\n")) this.torn = true;
    for (const text of journal.split("\n")) {
      if (!text) continue;
      this.lines++;
      let line: JournalLine;
      try {
        line = JSON.parse(text) as JournalLine;
      } catch {
        continue; // a line torn by a crash mid-write
      }
      if ("evicted" in line) this.live.delete(line.evicted);
      else this.live.set(line.id, line);
    }
    return [...this.live.values()];
  }

  /** Whether a record of this job has been saved (and not removed). */
  has(id: string): boolean {
    return this.live.has(id);
  }

  /** Appends the job's current record. */
  save(record: JobRecord): void {
    this.live.set(record.id, record);
    this.append(record);
  }

  /** Forgets a job and deletes its output directory in the background. */
  remove(id: string): void {
    this.live.delete(id);
    this.append({ evicted: id });
    void rm(this.jobDir(id), { recursive: true, force: true }).catch((err: unknown) =>
      this.log.warn({ err, job: id }, "could not remove job directory"),
    );
  }

  /**
   * A failed write (a full disk) is logged, never thrown: the record stays in memory and the next
   * line that does get written starts on a fresh line, so a torn one cannot swallow it.
   */
  private append(line: JournalLine): void {
    try {
      writeSync(this.journal, `${this.torn ? "\n" : ""}${JSON.stringify(line)}\n`);
      this.torn = false;
      this.lines++;
      if (this.lines > Math.max(COMPACT_MIN_LINES, COMPACT_FACTOR * this.live.size)) this.compact();
    } catch (err) {
      this.torn = true;
      this.log.error({ err }, "could not write the job journal; records are kept in memory");
    }
  }

  /**
   * Writes every live record to snapshot.json (temp + rename), then empties the journal. A crash
   * in between only means some journal lines are replayed over a snapshot that already has them.
   */
  private compact(): void {
    const tmp = `${this.snapshotPath}.tmp`;
    writeFileSync(tmp, JSON.stringify([...this.live.values()]));
    renameSync(tmp, this.snapshotPath);
    ftruncateSync(this.journal, 0);
    closeSync(this.journal);
    this.journal = openSync(this.journalPath, "a");
    this.lines = 0;
  }
}
