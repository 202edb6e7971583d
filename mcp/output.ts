import type { HotlineClient } from "../client/index.js";
import { INLINE_HEAD_BYTES as HEAD_BYTES, INLINE_TAIL_BYTES as TAIL_BYTES, type InlineOutput, type JobStatus } from "../protocol/common.js";

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

function decode(page: { data: string; encoding: string }): Buffer {
  return Buffer.from(page.data, page.encoding === "base64" ? "base64" : "utf8");
}

function encode(bytes: Buffer, total: number, omittedBytes: number): InlineOutput {
  try {
    return { data: strictUtf8.decode(bytes), encoding: "utf8", bytes: total, omittedBytes };
  } catch {
    return { data: bytes.toString("base64"), encoding: "base64", bytes: total, omittedBytes };
  }
}

/**
 * A job's output so far in the shape of the shell action's `output`, read with jobs.output (so it
 * works for every job kind): two requests at most, whatever the size.
 */
export async function readInlineOutput(client: HotlineClient, job: JobStatus): Promise<InlineOutput> {
  const total = job.outputBytes;
  const head = await client.request("jobs.output", { job: job.id, from: 0, limit: HEAD_BYTES + TAIL_BYTES });
  const headBytes = decode(head);
  if (head.eof || total <= HEAD_BYTES + TAIL_BYTES) return encode(headBytes, total, Math.max(0, total - headBytes.length));
  const first = headBytes.subarray(0, HEAD_BYTES);
  const tail = await client.request("jobs.output", { job: job.id, tail: TAIL_BYTES });
  const tailBytes = decode(tail);
  return encode(Buffer.concat([first, tailBytes]), total, Math.max(0, total - first.length - tailBytes.length));
}
