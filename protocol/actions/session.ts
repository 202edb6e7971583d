import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";
import { AbsolutePath, EnvMap, InlineOutput, JobDeadline, JobId, JobStartOptions, JobStatus } from "../common.js";

export const SessionId = Type.String({ pattern: "^s[0-9a-z]{6,40}$", description: "A session id, e.g. s0mx2c6b7x0004r4p2" });

export const SessionState = Type.Union(
  [Type.Literal("idle"), Type.Literal("running"), Type.Literal("awaiting_input"), Type.Literal("exited"), Type.Literal("lost")],
  {
    description:
      "idle: takes a command; running: a command runs (`job`); awaiting_input: its command waits for input; exited: its shell ended (exit, session.close, idle timeout); lost: the daemon stopped while it was open",
  },
);

const ProcessList = Type.Object(
  {
    count: Type.Integer({ minimum: 0 }),
    list: Type.Array(Type.Object({ pid: Type.Integer(), command: Type.String() }), { maxItems: 20 }),
  },
  { description: "the session's live processes other than its shell (background ones, and a running command's), the first 20 by pid" },
);

export const SessionStatus = Type.Object({
  id: SessionId,
  state: SessionState,
  cwd: Type.String({ description: "the working directory after the last command" }),
  createdAt: Type.String({ description: "ISO 8601" }),
  job: Type.Optional(JobId),
  shellJob: Type.Optional(Type.String({ description: "the job of the session's shell: its log is the transcript of every command" })),
  pid: Type.Optional(Type.Integer({ description: "the shell's pid" })),
  generation: Type.Optional(Type.Integer({ minimum: 1, description: "1, plus one for each restart of the shell (its state was lost)" })),
  inputWaitMs: Type.Optional(Type.Integer()),
  idleTimeoutMs: Type.Optional(Type.Integer()),
  ended: Type.Optional(
    Type.Object({ reason: Type.String(), exitCode: Type.Optional(Type.Integer()) }, { description: "why an exited or lost session ended" }),
  ),
  processes: Type.Optional(ProcessList),
});

const SessionReply = Type.Object({ session: SessionStatus });

/** A session command's job status: a job's, and what a session adds to it. */
export const SessionJobStatus = Type.Composite([
  JobStatus,
  Type.Object({
    session: Type.Optional(Type.String({ description: "the session the command ran in" })),
    awaitingInput: Type.Optional(Type.Literal(true, { description: "the command is blocked reading its stdin: answer with jobs.input" })),
    lastLine: Type.Optional(Type.String({ description: "while awaiting input: the last line it printed (the prompt)" })),
    shellReplaced: Type.Optional(
      Type.Literal(true, { description: "bash exited under the command; a new shell with its saved state replaced it" }),
    ),
  }),
]);

/** A command: bash text, no NUL (bash cannot hold one). */
const Command = Type.String({ minLength: 1, maxLength: 131072, pattern: "^[^\\u0000]*$" });

export const sessionOpen = defineAction({
  name: "session.open",
  scope: "manage",
  summary:
    "Open a persistent bash session: cd, variables, functions, aliases, options and an activated venv carry from one session.run to the next.",
  params: Type.Object(
    {
      cwd: Type.Optional(AbsolutePath),
      env: Type.Optional(EnvMap),
      inputWaitMs: Type.Optional(
        Type.Integer({
          minimum: 100,
          maximum: 600000,
          description: "a command blocked reading stdin this long with no output is awaiting input",
        }),
      ),
      idleTimeoutMs: Type.Optional(
        Type.Integer({
          minimum: 0,
          maximum: 7 * 24 * 3600 * 1000,
          description: "the session closes after this long without a command; 0: never",
        }),
      ),
      resume: Type.Optional(SessionId),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    session: SessionStatus,
    resumed: Type.Optional(
      Type.Object({ cwd: Type.String(), lost: Type.Array(Type.String(), { description: "what the new shell does not have" }) }),
    ),
  }),
});

export const sessionRun = defineAction({
  name: "session.run",
  scope: "manage",
  summary:
    "Run a command in a session's shell as a job of its own (its output, its exit code); returns early when the command waits for input.",
  params: Type.Object({ session: SessionId, command: Command, ...JobDeadline, ...JobStartOptions }, { additionalProperties: false }),
  result: Type.Object({ job: SessionJobStatus, output: Type.Optional(InlineOutput) }),
});

export const sessionStatus = defineAction({
  name: "session.status",
  scope: "manage",
  summary: "A session's state, cwd, running job and background processes.",
  params: Type.Object({ session: SessionId }, { additionalProperties: false }),
  result: SessionReply,
});

export const sessionList = defineAction({
  name: "session.list",
  scope: "manage",
  summary: "The open sessions, and the ended or lost ones still known.",
  params: Type.Object({}, { additionalProperties: false }),
  result: Type.Object({ sessions: Type.Array(SessionStatus) }),
});

export const sessionClose = defineAction({
  name: "session.close",
  scope: "manage",
  summary: "Close a session: its shell and every process it started end.",
  params: Type.Object({ session: SessionId }, { additionalProperties: false }),
  result: SessionReply,
});
