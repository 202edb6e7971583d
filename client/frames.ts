import type { WireError } from "../protocol/errors.js";
import type { FsChangeEvent, JobOutputEvent, ServerEvent } from "../protocol/events.js";
import { HotlineError } from "./errors.js";

/** A `job.output` event with its bytes decoded: from a binary frame, or a text frame's data + encoding. */
export type OutputChunk = Omit<JobOutputEvent, "data" | "encoding"> & { bytes: Buffer };
/** What a follower receives: output as bytes, every other job event exactly as the protocol defines it. */
export type FollowEvent = OutputChunk | Exclude<ServerEvent, JobOutputEvent | FsChangeEvent>;

/** A message as it came over the wire: a text frame's JSON object; a binary frame's header with its bytes as `bytes`. */
export type WireFrame = Record<string, unknown>;
export type Reply = (
  | { kind: "reply"; id: unknown; ok: true; result: unknown }
  | { kind: "reply"; id: unknown; ok: false; error: WireError }
) & { frame: WireFrame };
export type Incoming = Reply | { kind: "event"; event: FollowEvent; frame: WireFrame };

function malformed(what: string): HotlineError {
  return new HotlineError("internal", `the daemon sent a malformed frame: ${what}`);
}

/**
 * A binary frame (jobs.follow with binary: true, see daemon/jobs/follow.ts binaryFrame): a 4-byte
 * big-endian header length, the JSON header, then the raw output bytes. The bytes are a view of the
 * frame, not a copy.
 */
function parseBinary(data: Buffer): Incoming {
  if (data.length < 4) throw malformed(`binary frame of ${data.length} bytes`);
  const headerLength = data.readUInt32BE(0);
  if (4 + headerLength > data.length) throw malformed(`binary header of ${headerLength} bytes in a frame of ${data.length}`);
  const header = JSON.parse(data.subarray(4, 4 + headerLength).toString("utf8")) as Omit<OutputChunk, "bytes">;
  const event = { ...header, bytes: data.subarray(4 + headerLength) };
  return { kind: "event", event, frame: event };
}

/**
 * A text event's bytes. All-ASCII text (its UTF-8 length is its length) is copied as latin1, which
 * is the same bytes at a third of the cost of encoding UTF-8: a JSON follower decodes every chunk.
 */
function textBytes(text: string, encoding: JobOutputEvent["encoding"]): Buffer {
  if (encoding === "base64") return Buffer.from(text, "base64");
  return Buffer.from(text, Buffer.byteLength(text, "utf8") === text.length ? "latin1" : "utf8");
}

function parseText(data: Buffer): Incoming {
  const frame = JSON.parse(data.toString("utf8")) as Record<string, unknown>;
  if (typeof frame.event === "string") {
    if (frame.event !== "job.output") return { kind: "event", event: frame as FollowEvent, frame };
    const { data: text, encoding, ...header } = frame as JobOutputEvent;
    return { kind: "event", event: { ...header, bytes: textBytes(text, encoding) }, frame };
  }
  if (frame.ok === true) return { kind: "reply", id: frame.id, ok: true, result: frame.result, frame };
  if (frame.ok === false) return { kind: "reply", id: frame.id, ok: false, error: frame.error as WireError, frame };
  throw malformed("a text frame with neither `event` nor `ok`");
}

/** Turns one WebSocket message into a reply or an event; throws HotlineError(internal) on garbage. */
export function parseFrame(data: Buffer, isBinary: boolean): Incoming {
  try {
    return isBinary ? parseBinary(data) : parseText(data);
  } catch (err) {
    if (err instanceof HotlineError) throw err;
    throw malformed((err as Error).message);
  }
}
