import { ActionError } from "../../protocol/errors.js";
import type { ChildExit, ReplChild } from "./child.js";

/** How long a child may take to say it is ready, unless the repl says otherwise. */
export const READY_TIMEOUT_MS = 10_000;
/** What a child wrote before it was ready is kept up to this, for the error when it never gets there. */
const EARLY_OUTPUT_BYTES = 4096;

/**
 * The start of one generation: ready when its driver says so, failed when it exits first, breaks
 * its protocol or says nothing within the timeout (then its group is killed). The error quotes the
 * start of what it wrote, which is where an interpreter explains why it could not start.
 */
export class StartWatch {
  isReady = false;
  readonly ready: Promise<void>;
  private resolve!: () => void;
  private reject!: (error: Error) => void;
  private child: ReplChild | undefined;
  private timer: NodeJS.Timeout | undefined;
  private early = Buffer.alloc(0);

  constructor(
    private readonly name: string,
    private readonly timeoutMs = READY_TIMEOUT_MS,
  ) {
    this.ready = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  /** The child was spawned: its timeout starts. */
  begin(child: ReplChild): void {
    this.child = child;
    this.timer = setTimeout(() => this.failed(`it sent no ready message within ${this.timeoutMs} ms`), this.timeoutMs);
    this.timer.unref();
  }

  noteOutput(data: Buffer): void {
    if (this.early.length < EARLY_OUTPUT_BYTES) this.early = Buffer.concat([this.early, data]).subarray(0, EARLY_OUTPUT_BYTES);
  }

  readied(): void {
    if (this.isReady) return;
    this.isReady = true;
    clearTimeout(this.timer);
    this.early = Buffer.alloc(0);
    this.resolve();
  }

  /** Before ready: the start fails with `why` and the child's group is killed. After ready: nothing. */
  failed(why: string): void {
    if (this.isReady) return;
    this.isReady = true; // settled: later output and messages are the repl's to route
    clearTimeout(this.timer);
    this.child?.signalGroup("SIGKILL");
    const wrote = this.early.length ? `; it wrote: ${JSON.stringify(this.early.toString("utf8"))}` : "";
    this.reject(new ActionError("unavailable", `${this.name} did not start: ${why}${wrote}`));
  }

  exited(exit: ChildExit): void {
    const how = exit.error ?? (exit.exitCode !== undefined ? `exit code ${exit.exitCode}` : `signal ${exit.signal}`);
    this.failed(`it ended (${how}) before it was ready`);
  }
}
