import type { Upload } from "./uploads.js";

/** Anything a connection holds open that must end with it. */
export interface Closable {
  close(): void;
}

/**
 * The file-action state of one connection: its chunked uploads and its watches. Both end when
 * the connection closes (uploads' temporary files are removed; watchers stop).
 */
export class FileSession {
  readonly uploads = new Map<string, Upload>();
  readonly watches = new Map<string, Closable>();

  close(): void {
    for (const upload of [...this.uploads.values()]) void upload.abandon();
    for (const watch of [...this.watches.values()]) watch.close();
    this.uploads.clear();
    this.watches.clear();
  }
}

/** The connection's session, made on first use. */
export function sessionOf(holder: { files?: FileSession }): FileSession {
  return (holder.files ??= new FileSession());
}
