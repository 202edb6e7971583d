import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";
import { JobId } from "../common.js";

/** ports.wait waits this long unless `timeoutMs` says otherwise. */
export const DEFAULT_PORT_WAIT_MS = 30_000;

/** A TCP socket listening in the sandbox, and who holds it when that can be told. */
export const ListeningPort = Type.Object({
  port: Type.Integer({ minimum: 1, maximum: 65535 }),
  /** The bound address: `0.0.0.0` and `::` listen on every interface, `127.0.0.1` and `::1` on loopback only. */
  address: Type.String(),
  family: Type.Union([Type.Literal("ipv4"), Type.Literal("ipv6")]),
  pid: Type.Optional(Type.Integer()),
  /** The process's command line (at most 200 characters). */
  command: Type.Optional(Type.String()),
  /** The daemon's job the process belongs to (also a child that left the job's process group). */
  job: Type.Optional(JobId),
  /** The process belongs to a job of another hotline daemon on this machine (its job id is not this daemon's to name). */
  foreignJob: Type.Optional(Type.Literal(true)),
});

export const portsList = defineAction({
  name: "ports.list",
  scope: "observe",
  summary: "The TCP ports listening in the sandbox (from /proc/net/tcp and tcp6): port, address, pid, command and the job they belong to.",
  params: Type.Object({}, { additionalProperties: false }),
  result: Type.Object({ ports: Type.Array(ListeningPort) }),
});

export const portsWait = defineAction({
  name: "ports.wait",
  scope: "observe",
  summary: "Wait until something listens on a TCP port; at the timeout, the current state (listening: false).",
  params: Type.Object(
    {
      port: Type.Integer({ minimum: 1, maximum: 65535 }),
      timeoutMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 600000 })),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({ listening: Type.Boolean(), listeners: Type.Array(ListeningPort) }),
});
