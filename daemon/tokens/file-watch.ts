import { type FSWatcher, unwatchFile, watch, watchFile } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, dirname } from "node:path";
import type { Logger } from "pino";
import { type TokenStore, tokenFromFile } from "./store.js";

/** How often the token file is stat'ed besides the directory watch (which a mount may not report). */
const POLL_MS = 2000;
/** A replacement token shorter than this is taken for a file caught half-written (see tokenFromFile). */
const MIN_REPLACEMENT_LENGTH = 16;

/**
 * Watches the token file and puts what it holds in force (TokenStore.replacePrimary): a token
 * rotated by rewriting the file, or by updating the Kubernetes Secret it is mounted from, takes
 * effect without a restart. inotify on the file's directory notices a write or a rename at once
 * (kubelet swaps the Secret volume's `..data` link); a stat every 2 s catches what it misses.
 * A file that goes missing or empty keeps the token in force: only a new token replaces it.
 */
export class TokenFileWatch {
  private watcher: FSWatcher | undefined;
  private reading = false;
  private again = false;
  private closed = false;
  /** The last refusal logged, so a bad file is reported once, not every poll. */
  private lastRefusal: string | undefined;
  private readonly onStat = (): void => this.check();

  constructor(
    private readonly tokens: TokenStore,
    private readonly log: Logger,
    private readonly pollMs = POLL_MS,
  ) {}

  get path(): string {
    return this.tokens.tokenPath;
  }

  start(): void {
    const name = basename(this.path);
    try {
      this.watcher = watch(dirname(this.path), { persistent: false }, (_event, changed) => {
        // The file itself, kubelet's `..data`/`..<timestamp>` entries, or a platform that names nothing.
        if (changed === null || changed === name || changed.startsWith("..")) this.check();
      });
      this.watcher.on("error", (err) => {
        this.log.info({ err, path: this.path }, "the token file's directory can no longer be watched; polling it");
        this.watcher?.close();
        this.watcher = undefined;
      });
    } catch (err) {
      this.log.info({ err, path: this.path }, "the token file's directory cannot be watched; polling it");
    }
    watchFile(this.path, { persistent: false, interval: this.pollMs }, this.onStat);
    this.check(); // says at once when the file holds no token
  }

  /** Reads the file again (one read at a time; a change during a read reads once more after it). */
  check(): void {
    if (this.closed) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    this.read()
      .catch((err: unknown) => this.log.error({ err, path: this.path }, "reading the token file failed"))
      .finally(() => {
        this.reading = false;
        if (this.again) {
          this.again = false;
          this.check();
        }
      });
  }

  private async read(): Promise<void> {
    let text: string;
    try {
      text = await readFile(this.path, "utf8");
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      this.refuse(code === "ENOENT" ? "the token file is missing" : `the token file cannot be read (${code ?? String(err)})`);
      return;
    }
    const read = tokenFromFile(text, MIN_REPLACEMENT_LENGTH);
    if (!read.ok) return this.refuse(read.why);
    this.lastRefusal = undefined;
    const hadOne = this.tokens.hasPrimary;
    if (await this.tokens.replacePrimary(read.token))
      this.log.info(
        { path: this.path },
        hadOne
          ? "the token file holds a new token: the old one and every token it issued are refused, their connections closed"
          : "the token file holds a token: the daemon can be reached",
      );
  }

  private refuse(why: string): void {
    if (why === this.lastRefusal) return;
    this.lastRefusal = why;
    this.log.warn({ path: this.path, why }, "the token file holds no new token; the token in force (if any) stays");
  }

  close(): void {
    this.closed = true;
    this.watcher?.close();
    unwatchFile(this.path, this.onStat);
  }
}
