import { type Static, Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";
import { AbsolutePath, EnvMap, InlineOutput, JobDeadline, JobId, JobStartOptions, JobStatus } from "../common.js";

/**
 * Code contexts: stateful Python and JavaScript interpreters (one driver process per context, see
 * daemon/code/), each run a job of kind `code` whose result holds the run's rich outputs.
 */

export const ContextId = Type.String({ pattern: "^c[0-9a-z]{6,40}$", description: "A code context id, e.g. c0mx2c6b7x0004r4p2" });

export const CodeLanguage = Type.Union([Type.Literal("python"), Type.Literal("javascript")]);
export type CodeLanguage = Static<typeof CodeLanguage>;

export const ContextState = Type.Union(
  [Type.Literal("starting"), Type.Literal("idle"), Type.Literal("busy"), Type.Literal("restarting"), Type.Literal("stopped")],
  {
    description:
      "idle: takes a run; busy: a run is running (`job`); starting/restarting: its interpreter is starting; stopped: its interpreter ended (idle timeout, or it exited) — the next run starts a fresh one and says so",
  },
);

/** A MIME bundle: MIME type → value (text as a string, image/png and image/jpeg as base64, application/json as JSON). */
export const MimeBundle = Type.Record(Type.String({ maxLength: 255 }), Type.Unknown(), {
  description: 'MIME type → value: text types as strings, "image/png" and "image/jpeg" as base64, "application/json" as JSON',
});

/** A value kept as a file of the run (read it with code.file) instead of inline. */
export const OutputFile = Type.Object({
  file: Type.String({ description: "the file's name among the run's files (code.file)" }),
  bytes: Type.Integer({ minimum: 0 }),
});

export const CodeOutput = Type.Object({
  type: Type.Union([Type.Literal("result"), Type.Literal("display")], {
    description: "result: the value of the code's last expression; display: a display(...) call or a figure",
  }),
  data: MimeBundle,
  files: Type.Optional(Type.Record(Type.String(), OutputFile, { description: "MIME type → a file of the run holding that value" })),
  metadata: Type.Optional(
    Type.Record(Type.String(), Type.Unknown(), { description: 'per MIME type, e.g. "image/png": {"width", "height"}' }),
  ),
});
export type CodeOutput = Static<typeof CodeOutput>;

export const CodeError = Type.Object({
  name: Type.String(),
  value: Type.String(),
  traceback: Type.Array(Type.String(), { description: "the lines the user would see, without the driver's own frames" }),
});

export const OmittedOutput = Type.Object({ mime: Type.String(), bytes: Type.Integer({ minimum: 0 }), why: Type.String() });

export const CodeRunStatus = Type.Union([
  Type.Literal("ok"),
  Type.Literal("error"),
  Type.Literal("interrupted"),
  Type.Literal("timed_out"),
]);

/** What a run produced: the `result` of code.run's reply and of its job in jobs.status. */
export const CodeRunResult = Type.Object({
  status: CodeRunStatus,
  outputs: Type.Array(CodeOutput),
  error: Type.Optional(CodeError),
  executionCount: Type.Integer({ minimum: 0, description: "this run's number in its interpreter (tracebacks name `<cell N>`)" }),
  context: ContextId,
  language: CodeLanguage,
  generation: Type.Integer({ minimum: 1, description: "1, plus one for each fresh interpreter of the context" }),
  contextRestarted: Type.Optional(
    Type.Literal(true, { description: "the context's state was lost before or during this run: a fresh interpreter runs from here" }),
  ),
  restartReason: Type.Optional(Type.String()),
  lost: Type.Optional(Type.Array(Type.String(), { description: "the names the lost interpreter held (the first 256)" })),
  lostTotal: Type.Optional(Type.Integer({ minimum: 0, description: "how many names were lost, when more than `lost` lists" })),
  omitted: Type.Optional(Type.Array(OmittedOutput, { description: "values not kept (over the run's budget): never dropped silently" })),
});
export type CodeRunResult = Static<typeof CodeRunResult>;

export const ContextStatus = Type.Object({
  id: ContextId,
  language: CodeLanguage,
  cwd: Type.String(),
  generation: Type.Integer({ minimum: 1 }),
  state: ContextState,
  default: Type.Optional(Type.Literal(true, { description: "the language's default context (code.run without `context`)" })),
  interpreter: Type.Optional(Type.String({ description: "the executable of the interpreter (python3, node)" })),
  version: Type.Optional(Type.String()),
  pid: Type.Optional(Type.Integer({ description: "the driver's pid" })),
  job: Type.Optional(Type.String({ description: "the running run's job" })),
  hostJob: Type.Optional(Type.String({ description: "the job of the interpreter process (its log holds output written between runs)" })),
  executionCount: Type.Integer({ minimum: 0 }),
  names: Type.Optional(Type.Array(Type.String(), { description: "the names the interpreter holds after its last run (the first 256)" })),
  namesTotal: Type.Optional(Type.Integer({ minimum: 0 })),
  memoryBytes: Type.Optional(Type.Integer({ minimum: 0, description: "resident memory of the interpreter process" })),
  idleTimeoutMs: Type.Integer({ minimum: 0 }),
  createdAt: Type.String({ description: "ISO 8601" }),
  lastRunAt: Type.Optional(Type.String()),
  stopped: Type.Optional(Type.Object({ reason: Type.String() }, { description: "why a stopped context's interpreter ended" })),
});
export type ContextStatus = Static<typeof ContextStatus>;

const ContextReply = Type.Object({ context: ContextStatus });

const IdleTimeout = Type.Integer({
  minimum: 0,
  maximum: 7 * 24 * 3600 * 1000,
  description: "stop the interpreter (freeing its memory) after this long without a run; 0: never",
});

export const codeContextCreate = defineAction({
  name: "code.context.create",
  scope: "manage",
  summary: "Start a stateful Python or JavaScript interpreter (a code context): variables, imports and functions persist across code.run.",
  params: Type.Object(
    {
      language: CodeLanguage,
      cwd: Type.Optional(AbsolutePath),
      env: Type.Optional(EnvMap),
      idleTimeoutMs: Type.Optional(IdleTimeout),
      interpreter: Type.Optional(AbsolutePath),
    },
    { additionalProperties: false },
  ),
  result: ContextReply,
});

export const codeRun = defineAction({
  name: "code.run",
  scope: "manage",
  summary:
    "Run code in a code context as a job of kind `code`: stdout/stderr are its output; its result has the status, the last expression's value and every display as MIME bundles (charts as image/png), or the error.",
  params: Type.Object(
    {
      code: Type.String({ maxLength: 1048576 }),
      context: Type.Optional(ContextId),
      language: Type.Optional(CodeLanguage),
      ...JobDeadline,
      ...JobStartOptions,
    },
    { additionalProperties: false },
  ),
  result: Type.Object({ job: JobStatus, result: Type.Optional(CodeRunResult), output: Type.Optional(InlineOutput) }),
});

export const codeContextList = defineAction({
  name: "code.context.list",
  scope: "manage",
  summary: "The code contexts, and the budget they share.",
  params: Type.Object({}, { additionalProperties: false }),
  result: Type.Object({
    contexts: Type.Array(ContextStatus),
    budget: Type.Object({
      open: Type.Integer({ minimum: 0, description: "contexts with a live interpreter" }),
      maxContexts: Type.Integer({ minimum: 1 }),
      memoryBytes: Type.Integer({ minimum: 0 }),
      maxMemoryBytes: Type.Integer({ minimum: 0 }),
    }),
  }),
});

export const codeContextRestart = defineAction({
  name: "code.context.restart",
  scope: "manage",
  summary: "Replace a context's interpreter with a fresh one: its state is lost (listed in `lost`), its generation goes up.",
  params: Type.Object({ context: ContextId }, { additionalProperties: false }),
  result: Type.Object({
    context: ContextStatus,
    lost: Type.Array(Type.String()),
    lostTotal: Type.Optional(Type.Integer({ minimum: 0 })),
  }),
});

export const codeContextRemove = defineAction({
  name: "code.context.remove",
  scope: "manage",
  summary: "End a code context: its interpreter and every process it started end, and its memory is freed.",
  params: Type.Object({ context: ContextId }, { additionalProperties: false }),
  result: Type.Object({ removed: ContextId }),
});

/** Largest reply of code.file, the same budget as jobs.output. */
export const CODE_FILE_MAX_LIMIT = 4 * 1024 * 1024;

export const codeFile = defineAction({
  name: "code.file",
  scope: "observe",
  summary: "Bytes of a file a run kept (an output's `files`: a large image, a long table), as base64 from an offset.",
  params: Type.Object(
    {
      job: JobId,
      file: Type.String({ minLength: 1, maxLength: 255, pattern: "^[A-Za-z0-9._-]+$" }),
      offset: Type.Optional(Type.Integer({ minimum: 0 })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: CODE_FILE_MAX_LIMIT })),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    data: Type.String({ description: "base64" }),
    encoding: Type.Literal("base64"),
    size: Type.Integer({ minimum: 0 }),
    offset: Type.Integer({ minimum: 0 }),
    next: Type.Integer({ minimum: 0 }),
    eof: Type.Boolean(),
  }),
});
