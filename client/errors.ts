import type { ErrorCode, WireError } from "../protocol/errors.js";

/**
 * Every failure the client reports: a daemon's error reply unchanged (same code, message, path and
 * details as on the wire), or a client-side failure under the same stable codes (`unavailable` when
 * the daemon cannot be reached, `unauthorized` when no token can be read).
 */
export class HotlineError extends Error {
  readonly code: ErrorCode;
  readonly path?: string;
  readonly details?: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: { path?: string; details?: Record<string, unknown>; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "HotlineError";
    this.code = code;
    if (options.path !== undefined) this.path = options.path;
    if (options.details !== undefined) this.details = options.details;
  }

  /** The error of a reply (`ok: false`), kept exactly as the daemon sent it. */
  static fromWire(error: WireError): HotlineError {
    return new HotlineError(error.code, error.message, { path: error.path, details: error.details });
  }
}
