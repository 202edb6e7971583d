import { Type, type Static } from "@sinclair/typebox";
import { ERROR_CODES } from "./errors.js";

/** A request id is echoed verbatim in the reply so a client can match many requests in flight. */
export const RequestId = Type.Union([Type.String({ maxLength: 200 }), Type.Number()]);

export const JobId = Type.String({ pattern: "^j[0-9a-z]{6,40}$", description: "A job id, e.g. j0m3k2x9a1b2c3" });

/** A client-chosen idempotency key: same key + same parameters → the same job. */
export const IdempotencyKey = Type.String({ minLength: 1, maxLength: 200, pattern: "^[A-Za-z0-9._:/@+=-]+$" });

export const JobState = Type.Union([
  Type.Literal("queued"),
  Type.Literal("running"),
  Type.Literal("succeeded"),
  Type.Literal("failed"),
  Type.Literal("cancelled"),
  Type.Literal("timed_out"),
  Type.Literal("lost"),
]);
export type JobState = Static<typeof JobState>;
export const FINAL_STATES: readonly JobState[] = ["succeeded", "failed", "cancelled", "timed_out", "lost"];

export const OutputStream = Type.Union([Type.Literal("stdout"), Type.Literal("stderr"), Type.Literal("pty")]);
export type OutputStream = Static<typeof OutputStream>;

export const Encoding = Type.Union([Type.Literal("utf8"), Type.Literal("base64")]);
export type Encoding = Static<typeof Encoding>;

export const Progress = Type.Object({
  phase: Type.String(),
  done: Type.Number(),
  total: Type.Union([Type.Number(), Type.Null()]),
  unit: Type.String(),
  message: Type.String(),
});
export type Progress = Static<typeof Progress>;

const errorCodeLiterals = Object.keys(ERROR_CODES).map((code) => Type.Literal(code));
export const WireErrorSchema = Type.Object({
  code: Type.Union(errorCodeLiterals),
  message: Type.String(),
  path: Type.Optional(Type.String()),
  details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

/** What a process job's processes use: sampled from /proc every half second while it runs, final once it ends. */
export const JobUsage = Type.Object(
  {
    cpuMs: Type.Integer({ minimum: 0, description: "CPU time (user + system) of all its processes, ended ones included" }),
    rssBytes: Type.Integer({ minimum: 0, description: "resident memory of its live processes together, at the last sample" }),
    peakRssBytes: Type.Integer({ minimum: 0, description: "the most rssBytes reached at any sample" }),
    processes: Type.Integer({ minimum: 0, description: "its live processes at the last sample" }),
  },
  {
    description:
      "a process job's CPU and memory: every process carrying its AGENT_JOB_ID (setsid strays too); live while it runs, final once it ended",
  },
);
export type JobUsage = Static<typeof JobUsage>;

export const JobStatus = Type.Object({
  id: JobId,
  kind: Type.String(),
  title: Type.String(),
  state: JobState,
  exitCode: Type.Optional(Type.Integer()),
  signal: Type.Optional(Type.String()),
  createdAt: Type.String({ description: "ISO 8601" }),
  startedAt: Type.Optional(Type.String()),
  endedAt: Type.Optional(Type.String()),
  progress: Type.Optional(Progress),
  outputBytes: Type.Integer({ minimum: 0 }),
  omittedBytes: Type.Optional(Type.Integer({ minimum: 0 })),
  error: Type.Optional(WireErrorSchema),
  result: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  key: Type.Optional(Type.String()),
  cwd: Type.Optional(Type.String()),
  pid: Type.Optional(Type.Integer({ description: "the process (group) id of a process job while it runs" })),
  processes: Type.Optional(
    Type.Object(
      {
        count: Type.Integer({ minimum: 0 }),
        list: Type.Array(Type.Object({ pid: Type.Integer(), command: Type.String() }), { maxItems: 20 }),
      },
      { description: "jobs.status of a running process job: its live processes (all that carry its AGENT_JOB_ID), the first 20 by pid" },
    ),
  ),
  usage: Type.Optional(JobUsage),
});
export type JobStatus = Static<typeof JobStatus>;

/** Fields of every action that starts a job: an idempotency key, and how long to wait for its end. */
export const JobStartOptions = {
  key: Type.Optional(IdempotencyKey),
  wait: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 600000, description: "wait up to this many ms for the job to end before replying" }),
  ),
};

/** A job's own deadline, for actions whose jobs take one. */
export const JobDeadline = {
  timeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 7 * 24 * 3600 * 1000 })),
};

/** The reply of an action that started a job (its result is in job.result once it succeeded). */
export const JobStartResult = Type.Object({ job: JobStatus });

/** Inline output is the whole output up to INLINE_HEAD_BYTES + INLINE_TAIL_BYTES, else its first and last bytes. */
export const INLINE_HEAD_BYTES = 16 * 1024;
export const INLINE_TAIL_BYTES = 48 * 1024;

/** A bounded slice of a job's output returned inline (head + tail when it is too long). */
export const InlineOutput = Type.Object({
  data: Type.String(),
  encoding: Encoding,
  bytes: Type.Integer({ minimum: 0 }),
  omittedBytes: Type.Integer({ minimum: 0 }),
});
export type InlineOutput = Static<typeof InlineOutput>;

/** Starts with `/`; no NUL byte, which no system call accepts (the kernel would see a shorter path). */
const ABSOLUTE_PATH_PATTERN = "^/[^\\u0000]*$";
export const AbsolutePath = Type.String({ minLength: 1, maxLength: 4096, pattern: ABSOLUTE_PATH_PATTERN });
/** What a schema pattern means, for validation messages that say what to change. */
export const PATTERN_MEANINGS: Readonly<Record<string, string>> = {
  [ABSOLUTE_PATH_PATTERN]: "must be an absolute path (starting with /) without NUL bytes",
};
export const EnvMap = Type.Record(
  Type.String({ pattern: "^[A-Za-z_][A-Za-z0-9_]*$", maxLength: 256 }),
  Type.String({ maxLength: 131072 }),
  {
    maxProperties: 1000,
  },
);
