/** Stable error codes: the only error vocabulary on the wire. Each has a one-line meaning the guide documents. */
export const ERROR_CODES = {
  bad_json: "The frame was not valid JSON, or not a JSON object.",
  invalid_request: "A field is missing, has the wrong type, or a value is refused; `path` is the JSON Pointer of the field.",
  unknown_action: "No action has that name; `details.suggestion` is the nearest valid name.",
  unauthorized: "No token, a wrong token, or an expired token (HTTP 401 on the upgrade).",
  forbidden:
    "The token's scope does not allow this, the Origin is not allowed (HTTP 403 on the upgrade), or a file action names the daemon's own directories.",
  not_found: "The job, workspace, repository or task does not exist.",
  conflict:
    "The request contradicts existing state: key reused with other parameters, destination exists, lock must change, job already finished.",
  limit_exceeded: "A size, count or rate limit was passed (frame too large, too many followers, archive too big).",
  unavailable: "A tool the action needs (nix, git) is missing, the daemon is out of file descriptors (retry), or it is shutting down.",
  internal: "A bug or an unexpected failure in the daemon; the message says what failed.",
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface WireError {
  code: ErrorCode;
  message: string;
  /** JSON Pointer (RFC 6901) of the offending request field, e.g. "/command/0". */
  path?: string;
  details?: Record<string, unknown>;
}

/** The one error type every layer throws; dispatch turns it into a wire error unchanged. */
export class ActionError extends Error {
  readonly code: ErrorCode;
  readonly path?: string;
  readonly details?: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: { path?: string; details?: Record<string, unknown>; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "ActionError";
    this.code = code;
    this.path = options.path;
    this.details = options.details;
  }

  toWire(): WireError {
    const wire: WireError = { code: this.code, message: this.message };
    if (this.path !== undefined) wire.path = this.path;
    if (this.details !== undefined) wire.details = this.details;
    return wire;
  }
}
