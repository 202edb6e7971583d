import { type DecoderFactory, RecordSplitter } from "./records.js";

/** One message as an NDJSON line (JSON escapes every newline inside strings, so one object is one line). */
export function ndjsonLine(message: unknown): Buffer {
  return Buffer.from(`${JSON.stringify(message)}\n`);
}

/**
 * The decoder of an NDJSON channel (the code drivers' fd 4): one JSON object per line, each at most
 * `maxLineBytes`; a line that is not a JSON object is a protocol error.
 */
export function ndjsonDecoder(maxLineBytes: number): DecoderFactory<Record<string, unknown>> {
  return (emit, fail) =>
    new RecordSplitter(
      0x0a,
      maxLineBytes,
      (line) => {
        let value: unknown;
        try {
          value = JSON.parse(line.toString("utf8"));
        } catch {
          return fail(new Error(`the child sent a line that is not JSON: ${JSON.stringify(line.subarray(0, 80).toString("utf8"))}`));
        }
        if (typeof value !== "object" || value === null || Array.isArray(value))
          return fail(new Error(`the child sent a JSON line that is not an object: ${line.subarray(0, 80).toString("utf8")}`));
        emit(value as Record<string, unknown>);
      },
      fail,
    );
}
