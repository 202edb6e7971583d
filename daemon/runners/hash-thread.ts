import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { ActionError } from "../../protocol/errors.js";
import type { HashReply, HashRequest } from "./hash-worker.js";

/**
 * SHA-256 of a download while it is written. Hashing on the event loop was ~40% of a 1 GiB
 * loopback download's time (1.9 GB/s, against the reads and writes), so a large body is hashed by
 * one worker thread the daemon shares between downloads, in parallel with the network: it reads
 * back from the page cache what the event loop has written, through a descriptor of its own for
 * the file. Only byte counts cross between the threads, one message in flight per download, so
 * nothing is copied or queued for it (posting the received buffers instead kept them alive until
 * the idle thread's next garbage collection: 1.3 GB for a 2 GiB download; copying them to shared
 * memory cost more than the overlap gained). Bodies known to be small are hashed in place, where
 * a round trip to the thread would cost more than the hash.
 */

const WORKER_URL = new URL("./hash-worker.js", import.meta.url);
/** A body shorter than this (by its Content-Length) is hashed on the event loop. */
const THREAD_MIN_BYTES = 8 * 1024 * 1024;
/** An idle thread ends after this long, giving its memory back. */
const IDLE_MS = 15_000;

/** The SHA-256 of a file as it is written in order; `digest` ends it, `drop` discards it. */
export interface StreamHash {
  /** `buffers` are now on disk, ending at byte `end` of the file; every byte before them was reported before. */
  wrote(buffers: readonly Buffer[], end: number): void;
  digest(): Promise<string>;
  drop(): void;
}

/** A SHA-256 of what is written to `handle`, for a body of `expectedBytes` (null: unknown). */
export async function sha256Of(handle: FileHandle, expectedBytes: number | null): Promise<StreamHash> {
  const thread = expectedBytes !== null && expectedBytes < THREAD_MIN_BYTES ? undefined : HashThread.shared();
  if (!thread) return new InPlaceHash();
  // A descriptor of the thread's own: the write handle is closed on the event loop's schedule, not the thread's.
  const reader = await open(`/proc/self/fd/${handle.fd}`, "r").catch(() => undefined);
  return reader ? thread.open(reader) : new InPlaceHash();
}

/** Hashes the written buffers themselves, on the event loop. */
export class InPlaceHash implements StreamHash {
  private readonly hash = createHash("sha256");
  wrote(buffers: readonly Buffer[]): void {
    for (const b of buffers) this.hash.update(b);
  }
  async digest(): Promise<string> {
    return this.hash.digest("hex");
  }
  drop(): void {}
}

class ThreadedHash implements StreamHash {
  private known = 0;
  private inFlight = false;
  private ended = false;
  private failure: Error | undefined;
  private digestWaiter: { resolve: (hex: string) => void; reject: (err: Error) => void } | undefined;

  constructor(
    private readonly thread: HashThread,
    readonly id: number,
    private readonly reader: FileHandle,
  ) {}

  wrote(_buffers: readonly Buffer[], end: number): void {
    this.known = end;
    if (!this.inFlight && !this.ended && !this.failure) this.send();
  }

  digest(): Promise<string> {
    if (this.failure) return Promise.reject(this.failure);
    this.ended = true;
    const digested = new Promise<string>((resolve, reject) => (this.digestWaiter = { resolve, reject }));
    if (!this.inFlight) this.send();
    return digested;
  }

  drop(): void {
    // A failed stream is closed already: posting would only start a thread to forget it.
    if (this.ended || this.failure) return;
    this.ended = true;
    this.thread.post({ stream: this.id, drop: true });
  }

  reply(m: HashReply): void {
    this.inFlight = false;
    if ("hex" in m) {
      this.digestWaiter?.resolve(m.hex);
      return this.close();
    }
    if ("error" in m) return this.fail(new ActionError("internal", `hashing the download failed: ${m.error}`));
    if ("dropped" in m) return this.close();
    if (this.ended && this.digestWaiter) this.send();
    else if (!this.ended && this.known > m.hashed) this.send();
  }

  fail(err: Error): void {
    this.failure = err;
    this.digestWaiter?.reject(err);
    this.close();
  }

  private send(): void {
    this.inFlight = true;
    const digest = this.ended && this.digestWaiter !== undefined;
    this.thread.post({ stream: this.id, fd: this.reader.fd, upTo: this.known, ...(digest ? { digest: true as const } : {}) });
  }

  private close(): void {
    this.digestWaiter = undefined;
    this.thread.close(this);
    void this.reader.close().catch(() => undefined);
  }
}

/** The one hashing thread, started on first use and ended when idle; a crash fails its streams, and the next use starts another. */
class HashThread {
  private static instance: HashThread | undefined;
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly streams = new Map<number, ThreadedHash>();
  private idleTimer: NodeJS.Timeout | undefined;

  /** Undefined when the worker's script is not built (tests importing the TypeScript sources). */
  static shared(): HashThread | undefined {
    if (!HashThread.instance && existsSync(fileURLToPath(WORKER_URL))) HashThread.instance = new HashThread();
    return HashThread.instance;
  }

  open(reader: FileHandle): ThreadedHash {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    const stream = new ThreadedHash(this, this.nextId++, reader);
    this.streams.set(stream.id, stream);
    return stream;
  }

  post(m: HashRequest): void {
    this.start().postMessage(m);
  }

  close(stream: ThreadedHash): void {
    if (!this.streams.delete(stream.id) || this.streams.size > 0 || !this.worker) return;
    this.idleTimer = setTimeout(() => this.stop(), IDLE_MS).unref();
  }

  private stop(): void {
    const worker = this.worker;
    this.worker = undefined;
    void worker?.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_URL);
    worker.unref();
    worker.on("message", (m: HashReply) => this.streams.get(m.stream)?.reply(m));
    const fail = (why: string): void => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      const err = new ActionError("internal", `hashing the download failed: ${why}`);
      for (const stream of [...this.streams.values()]) stream.fail(err);
    };
    worker.on("error", (err) => fail(err.message));
    worker.on("exit", (code) => fail(`the hashing thread exited (${code})`));
    this.worker = worker;
    return worker;
  }
}
