import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";
import { DesktopInfo } from "./desktop.js";

export const stateInfo = defineAction({
  name: "state.info",
  scope: "observe",
  summary: "What this daemon is: version, build, system, user, directories, job counts, activity, Nix, actions.",
  params: Type.Object({}, { additionalProperties: false }),
  result: Type.Object({
    name: Type.Literal("hotline"),
    version: Type.String(),
    protocolVersion: Type.Integer(),
    commit: Type.String(),
    node: Type.String(),
    system: Type.String(),
    user: Type.String(),
    pid: Type.Integer(),
    startedAt: Type.String(),
    uptimeMs: Type.Integer(),
    directories: Type.Object(
      {
        state: Type.String({ description: "the daemon's state: job records and output, daemon.json" }),
        config: Type.String({ description: "the token and tokens.json, config.json" }),
        cache: Type.String({ description: "prepared environments and their GC roots" }),
        systemConfig: Type.String({ description: "the system-wide config.json" }),
        workspaceRoot: Type.String({ description: "the coding workspace: project/repos/ and tasks/" }),
        repos: Type.String({ description: "shared clones: <repos>/<repo>/repo" }),
        tasks: Type.String({ description: "task worktrees: <tasks>/<task>/repo" }),
        jobs: Type.String({ description: "one directory per job: its record and output" }),
        environments: Type.String({ description: "prepared environments of this system: <environments>/<cacheKey>" }),
        snapshots: Type.String({ description: "repos.snapshot archives" }),
        bundles: Type.String({ description: "repos.bundle files" }),
      },
      { description: "Absolute paths; a directory may not exist yet until something is written there." },
    ),
    jobs: Type.Record(Type.String(), Type.Integer()),
    output: Type.Object(
      { budgetBytes: Type.Integer(), usedBytes: Type.Integer() },
      { description: "job output kept on disk, against the budget" },
    ),
    lastActivity: Type.String(),
    idleMs: Type.Integer(),
    nix: Type.Object({
      available: Type.Boolean(),
      version: Type.Optional(Type.String()),
      flakes: Type.Boolean(),
      reason: Type.Optional(Type.String()),
    }),
    eventLoop: Type.Object(
      {
        since: Type.String({ description: "when measuring began (the daemon started listening)" }),
        maxMs: Type.Number({ description: "the longest any event-loop turn was late, whatever the cause" }),
        p99Ms: Type.Number(),
        stalls: Type.Integer({ description: "turns over 100 ms the daemon itself spent (not waiting for a CPU)" }),
        worstStall: Type.Optional(Type.Object({ busyMs: Type.Number(), cause: Type.String(), at: Type.String() })),
      },
      { description: "how long the daemon kept every client waiting: its event-loop delay since `since`" },
    ),
    ssh: Type.Object(
      {
        available: Type.Boolean(),
        host: Type.Optional(Type.String()),
        port: Type.Optional(Type.Integer()),
        reason: Type.Optional(Type.String()),
      },
      { description: "the SSH server (ssh.open): where it listens, or why it does not" },
    ),
    desktop: DesktopInfo,
    scope: Type.String(),
    actions: Type.Array(Type.Object({ name: Type.String(), scope: Type.String(), summary: Type.String() })),
  }),
});
