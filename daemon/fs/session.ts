import { ActionError } from "../../protocol/errors.js";
import { BackgroundHashes } from "./hash.js";
import type { Upload } from "./uploads.js";

/** Anything a connection holds open that must end with it. */
export interface Closable {
  close(): void;
}

/**
 * The file-action state of one connection: its chunked uploads, its watches, and the hashes its
 * reads started. All end when the connection closes (uploads' temporary files are removed;
 * watchers and hashing stop), and so does any work a request of it is doing (`signal`).
 */
export class FileSession {
  readonly uploads = new Map<string, Upload>();
  readonly watches = new Map<string, Closable>();
  private readonly ended = new AbortController();
  /** Aborted when the connection closes: long file work (walks, removals, hashes, edits) stops. */
  readonly signal: AbortSignal = this.ended.signal;
  readonly hashes = new BackgroundHashes(this.signal);
  private closed = false;

  /**
   * Keeps an upload or watch that finished starting, or ends it at once: starting awaits, and
   * meanwhile the connection may have closed, or pipelined requests may have taken the last place.
   */
  adopt<T extends { id: string }>(kind: "uploads" | "watches", item: T, max: number, end: (item: T) => void): void {
    const held = this[kind] as Map<string, unknown>;
    if (this.closed || held.size >= max) {
      end(item);
      if (this.closed) throw new ActionError("unavailable", "the connection closed while this was starting");
      throw new ActionError("limit_exceeded", `at most ${max} ${kind} may be open per connection; finish or stop one first`);
    }
    held.set(item.id, item);
  }

  close(): void {
    this.closed = true;
    this.ended.abort();
    for (const upload of [...this.uploads.values()]) void upload.abandon().catch(() => undefined);
    for (const watch of [...this.watches.values()]) watch.close();
    this.uploads.clear();
    this.watches.clear();
  }
}

/** The connection's session, made on first use. */
export function sessionOf(holder: { files?: FileSession }): FileSession {
  return (holder.files ??= new FileSession());
}
