import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { HotlineError } from "../client/index.js";
import type { InlineOutput, JobStatus } from "../protocol/common.js";
import { INLINE_HEAD_BYTES as HEAD_BYTES } from "../protocol/common.js";
import { toolName } from "./tools.js";

/** Results whose JSON is longer than this are summarised without the JSON (structuredContent has it all). */
const MAX_JSON_CHARS = 8000;

/** A tool call that failed: an `isError` result naming the code, message and path — never a protocol error. */
export function errorResult(err: unknown): CallToolResult {
  const error =
    err instanceof HotlineError
      ? {
          code: err.code,
          message: err.message,
          ...(err.path !== undefined ? { path: err.path } : {}),
          ...(err.details ? { details: err.details } : {}),
        }
      : { code: "internal", message: (err as Error)?.message ?? String(err) };
  const where = "path" in error && error.path ? ` (at ${error.path})` : "";
  return {
    isError: true,
    content: [
      { type: "text", text: `${error.code}: ${error.message}${where}` },
      { type: "text", text: JSON.stringify({ error }) },
    ],
    structuredContent: error,
  };
}

/** An ordinary action's result: a one-line summary, then the JSON when it is short. */
export function actionResult(action: string, result: unknown): CallToolResult {
  const json = JSON.stringify(result);
  const lines = [`${action}: ${summarize(result)}`];
  if (json.length <= MAX_JSON_CHARS) lines.push(json);
  else {
    const short = JSON.stringify(result, abridge);
    lines.push(
      short.length <= MAX_JSON_CHARS
        ? short
        : `(the result is ${json.length} characters of JSON; its fields: ${Object.keys(result as object).join(", ")})`,
    );
    lines.push("(abridged: lists of more than 8 entries and long strings are shortened here; structuredContent has all of it)");
  }
  const structured =
    result !== null && typeof result === "object" && !Array.isArray(result) ? { structuredContent: result as Record<string, unknown> } : {};
  return { content: [{ type: "text", text: lines.join("\n") }], ...structured };
}

/** JSON.stringify replacer for a long result's text: long lists keep their first entries' names, long strings their start. */
function abridge(_key: string, value: unknown): unknown {
  if (typeof value === "string" && value.length > 200) return `${value.slice(0, 200)}…`;
  if (!Array.isArray(value) || value.length <= 8) return value;
  const names = value.map((v) => (v && typeof v === "object" && "name" in v ? String((v as { name: unknown }).name) : undefined));
  if (names.every((n) => n !== undefined)) return `${value.length} entries: ${names.join(", ")}`;
  return [...value.slice(0, 8), `… ${value.length - 8} more`];
}

function summarize(result: unknown): string {
  if (result === null || typeof result !== "object") return String(result);
  const record = result as Record<string, unknown>;
  if (Array.isArray(record.jobs)) return `${record.jobs.length} job(s)${record.more ? " (more: page with before)" : ""}`;
  if (typeof record.state === "string" && typeof record.id === "string") return statusLine(record as unknown as JobStatus);
  const keys = Object.keys(record);
  return keys.length ? `ok (${keys.join(", ")})` : "ok";
}

/** `job j1 succeeded (exit 0)`, `job j1 running (phase download: 3 MB of 10 MB)` … */
export function statusLine(job: JobStatus): string {
  const parts = [`job ${job.id} (${job.kind}) ${job.state}`];
  if (job.exitCode !== undefined) parts.push(`exit ${job.exitCode}`);
  if (job.signal) parts.push(`signal ${job.signal}`);
  if (job.progress?.phase) {
    const { phase, done, total, unit, message } = job.progress;
    parts.push(`${phase}: ${done}${total !== null ? ` of ${total}` : ""} ${unit}${message ? ` ${message}` : ""}`.trim());
  }
  if (job.error) parts.push(`error ${job.error.code}: ${job.error.message}`);
  return parts.join(", ");
}

function outputText(job: JobStatus, output: InlineOutput): string {
  if (output.bytes === 0) return "(no output)";
  if (output.encoding === "base64")
    return `(${output.bytes} bytes of binary output: read them with jobs_output {"job": "${job.id}", "from": 0})`;
  if (output.omittedBytes === 0) return output.data;
  const bytes = Buffer.from(output.data, "utf8");
  const head = bytes.subarray(0, HEAD_BYTES).toString("utf8");
  const rest = bytes.subarray(HEAD_BYTES).toString("utf8");
  const note = `\n[… ${output.omittedBytes} bytes of output omitted here; read them with jobs_output {"job": "${job.id}", "from": ${HEAD_BYTES}} …]\n`;
  return `${head}${note}${rest}`;
}

/** A job-starting tool's result when the job ended: status line and its output (head + tail when long). */
export function endedJobResult(result: Record<string, unknown>, job: JobStatus, output: InlineOutput): CallToolResult {
  const text = `${statusLine(job)}; ${output.bytes} bytes of output:\n${outputText(job, output)}`;
  return { content: [{ type: "text", text }], structuredContent: result };
}

/** A job started with `wait: 0`: its status and the calls that wait for it or read its output, no output itself. */
export function startedJobResult(result: Record<string, unknown>, job: JobStatus): CallToolResult {
  const text = [
    `${statusLine(job)}. Next: ${toolName("jobs.wait")} {"job": "${job.id}", "timeoutMs": 30000} waits for its end;`,
    `${toolName("jobs.output")} {"job": "${job.id}", "from": 0} reads its output; ${toolName("jobs.cancel")} {"job": "${job.id}"} stops it.`,
  ].join(" ");
  return { content: [{ type: "text", text }], structuredContent: result };
}

/** A job still running at the end of the wait: status, the output so far, and the exact next calls. */
export function runningJobResult(result: Record<string, unknown>, job: JobStatus, output: InlineOutput, waitedMs: number): CallToolResult {
  const next = [
    `after ${Math.round(waitedMs / 100) / 10} s. Next: ${toolName("jobs.wait")} {"job": "${job.id}", "timeoutMs": 30000}`,
    `then ${toolName("jobs.output")} {"job": "${job.id}", "from": ${output.bytes}} for the output after this point; stop it with ${toolName("jobs.cancel")} {"job": "${job.id}"}.`,
  ].join(" ");
  const text = `${statusLine(job)} ${next}\nOutput so far (${output.bytes} bytes):\n${outputText(job, output)}`;
  return { content: [{ type: "text", text }], structuredContent: result };
}
