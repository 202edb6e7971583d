/**
 * The driver's messages (fd 4, NDJSON; daemon/code/drivers/PROTOCOL.md), read defensively: user
 * code can write to fd 4 on purpose, so every field is checked before it is used, and a message of
 * the wrong shape is ignored rather than trusted.
 */

export type DriverMessage = Record<string, unknown>;

export interface ReadyMessage {
  protocol: number;
  version: string;
  executable: string;
  pid: number;
}

export interface DisplayMessage {
  data: Record<string, unknown>;
  files: Record<string, string>;
  metadata?: Record<string, unknown>;
}

export interface DoneMessage {
  status: "ok" | "error" | "interrupted";
  executionCount: number;
  result?: DisplayMessage;
  error?: { name: string; value: string; traceback: string[] };
  names: string[];
  namesTotal?: number;
  omitted: Array<{ mime: string; bytes: number; why: string }>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === "string") : []);

function stringRecord(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (isObject(v)) for (const [k, s] of Object.entries(v)) if (typeof s === "string") out[k] = s;
  return out;
}

export function readyOf(message: DriverMessage): ReadyMessage | undefined {
  if (message.type !== "ready") return undefined;
  return {
    protocol: typeof message.protocol === "number" ? message.protocol : -1,
    version: typeof message.version === "string" ? message.version : "",
    executable: typeof message.executable === "string" ? message.executable : "",
    pid: typeof message.pid === "number" ? message.pid : -1,
  };
}

/** A bundle with its files, from a display message or a done's `result`. */
function bundleOf(message: Record<string, unknown>): DisplayMessage | undefined {
  if (!isObject(message.data)) return undefined;
  const bundle: DisplayMessage = { data: message.data, files: stringRecord(message.files) };
  if (isObject(message.metadata)) bundle.metadata = message.metadata;
  return bundle;
}

/** A display of run `id`, or undefined (another run's, or not a display). */
export function displayOf(message: DriverMessage, id: string): DisplayMessage | undefined {
  return message.type === "display" && message.id === id ? bundleOf(message) : undefined;
}

/** The end of run `id`, or undefined. */
export function doneOf(message: DriverMessage, id: string): DoneMessage | undefined {
  if (message.type !== "done" || message.id !== id) return undefined;
  const status = message.status === "ok" || message.status === "interrupted" ? message.status : "error";
  const done: DoneMessage = {
    status,
    executionCount: Number.isInteger(message.executionCount) ? (message.executionCount as number) : 0,
    names: strings(message.names),
    omitted: Array.isArray(message.omitted)
      ? message.omitted.filter(isObject).map((o) => ({
          mime: String(o.mime ?? "?"),
          bytes: Number.isInteger(o.bytes) ? (o.bytes as number) : 0,
          why: String(o.why ?? ""),
        }))
      : [],
  };
  if (Number.isInteger(message.namesTotal)) done.namesTotal = message.namesTotal as number;
  if (isObject(message.result)) done.result = bundleOf(message.result);
  if (isObject(message.error)) {
    const e = message.error;
    done.error = { name: String(e.name ?? "Error"), value: String(e.value ?? ""), traceback: strings(e.traceback) };
  }
  return done;
}
