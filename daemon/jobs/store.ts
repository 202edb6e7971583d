import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "pino";
import type { JobRecord } from "./job.js";

/**
 * job.json files on disk. Writes are asynchronous and coalesced per job (only the newest record
 * is written, by temp file + rename), so persisting never sits between a process exiting and the
 * client hearing about it. `flush()` waits for every pending write (shutdown).
 */
export class JobStore {
  private readonly pending = new Map<string, JobRecord>();
  private readonly writing = new Map<string, Promise<void>>();
  private readonly created = new Set<string>();

  constructor(
    readonly dir: string,
    private readonly log: Logger,
  ) {
    mkdirSync(dir, { recursive: true });
  }

  jobDir(id: string): string {
    return join(this.dir, id);
  }

  /** Every readable record; directories without one (a crash mid-creation) are skipped. */
  loadAll(): JobRecord[] {
    const records: JobRecord[] = [];
    for (const id of readdirSync(this.dir)) {
      try {
        records.push(JSON.parse(readFileSync(join(this.dir, id, "job.json"), "utf8")) as JobRecord);
        this.created.add(id);
      } catch {
        continue;
      }
    }
    return records;
  }

  /**
   * Writes a new job's first record synchronously, so a job whose id a client has seen survives a
   * crash (a new file needs no rename: a torn first write is skipped by loadAll).
   */
  create(record: JobRecord): void {
    mkdirSync(this.jobDir(record.id), { recursive: true });
    writeFileSync(join(this.jobDir(record.id), "job.json"), JSON.stringify(record));
    this.created.add(record.id);
  }

  /** Schedules a write of this record; a newer save for the same job replaces an unwritten one. */
  save(record: JobRecord): void {
    const queued = this.pending.has(record.id);
    this.pending.set(record.id, structuredClone(record));
    if (!queued && !this.writing.has(record.id)) this.drain(record.id);
  }

  /** Deletes a job's directory once its pending writes are done. */
  remove(id: string): void {
    this.pending.delete(id);
    this.created.delete(id);
    const inFlight = this.writing.get(id);
    if (!inFlight) {
      rmSync(this.jobDir(id), { recursive: true, force: true });
      return;
    }
    void inFlight.then(() => rm(this.jobDir(id), { recursive: true, force: true })).catch((err: unknown) => this.log.warn({ err, job: id }, "could not remove job directory"));
  }

  async flush(): Promise<void> {
    while (this.writing.size) await Promise.all([...this.writing.values()]);
  }

  private drain(id: string): void {
    const run = async (): Promise<void> => {
      for (let record = this.pending.get(id); record; record = this.pending.get(id)) {
        this.pending.delete(id);
        const dir = this.jobDir(id);
        const tmp = join(dir, `job.json.tmp-${process.pid}`);
        try {
          if (!this.created.has(id)) await mkdir(dir, { recursive: true });
          this.created.add(id);
          await writeFile(tmp, JSON.stringify(record));
          await rename(tmp, join(dir, "job.json"));
        } catch (err) {
          this.log.error({ err, job: id }, "could not persist job");
        }
      }
    };
    const promise = run().finally(() => this.writing.delete(id));
    this.writing.set(id, promise);
  }
}
