import { rename, writeFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { connect } from "node:net";
import { join } from "node:path";
import type { Logger } from "pino";
import type { HttpRoute } from "./http-routes.js";

/** One condition of readiness: undefined when it holds, else why not (logged, never answered). */
export interface ReadinessCheck {
  name: string;
  check(): Promise<string | undefined> | string | undefined;
}

/**
 * A probe waits this long for fresh checks, then answers with the last verdict: an answer never
 * waits on a busy disk or a slow X server (a verdict is at most one probe period old then).
 */
const FRESH_WAIT_MS = 5;
/** Checks that have not finished in this long count as failed (a hung mount). */
const CHECK_TIMEOUT_MS = 2_000;

const HEADERS = { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff" };

/**
 * `GET /healthz` (live: the event loop answers) and `GET /readyz` (ready: every check holds) for an
 * orchestrator's probes and the image's HEALTHCHECK. Unauthenticated and under any Host (a kubelet
 * probes the pod's IP), so they say `ok` or `not ready` and nothing else: which check failed goes
 * to the log, once per change.
 */
export class Health {
  private verdict: { ready: boolean; failing: string[] } | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly checks: readonly ReadinessCheck[],
    private readonly log: Logger,
  ) {}

  /** The two routes, for the daemon's HTTP routes. */
  routes(): HttpRoute[] {
    return [
      { prefix: "/healthz", handle: (req, res) => answer(req, res, 200, "ok\n") },
      {
        prefix: "/readyz",
        handle: async (req, res) => {
          if (!isRead(req)) return answer(req, res, 405, "GET or HEAD\n");
          await Promise.race([this.refresh(), new Promise((resolve) => setTimeout(resolve, FRESH_WAIT_MS))]);
          const ready = this.verdict?.ready === true;
          answer(req, res, ready ? 200 : 503, ready ? "ok\n" : "not ready\n");
        },
      },
    ];
  }

  /** Runs every check (one run at a time: probes that arrive meanwhile share it) and keeps the verdict. */
  refresh(): Promise<void> {
    this.running ??= this.run().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async run(): Promise<void> {
    const results = await Promise.all(
      this.checks.map(async ({ name, check }) => {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<string>((resolve) => {
          timer = setTimeout(() => resolve(`no answer within ${CHECK_TIMEOUT_MS} ms`), CHECK_TIMEOUT_MS);
        });
        try {
          const why = await Promise.race([Promise.resolve().then(check), timeout]);
          return why === undefined ? undefined : `${name}: ${why}`;
        } catch (err) {
          return `${name}: ${(err as Error).message}`;
        } finally {
          clearTimeout(timer);
        }
      }),
    );
    const failing = results.filter((r): r is string => r !== undefined);
    const before = this.verdict;
    this.verdict = { ready: failing.length === 0, failing };
    if (before === undefined || before.failing.join("\n") !== failing.join("\n")) {
      if (failing.length === 0) this.log.info("ready");
      else this.log.warn({ failing }, "not ready");
    }
  }
}

function isRead(req: IncomingMessage): boolean {
  return req.method === "GET" || req.method === "HEAD";
}

function answer(req: IncomingMessage, res: ServerResponse, status: number, body: string): void {
  if (status !== 405 && !isRead(req)) return answer(req, res, 405, "GET or HEAD\n");
  res.writeHead(status, { ...HEADERS, "Content-Length": Buffer.byteLength(body), ...(status === 405 ? { Allow: "GET, HEAD" } : {}) });
  res.end(req.method === "HEAD" ? undefined : body);
}

/**
 * Ready while a new file can be made in `dir` and renamed, as the daemon's own writes are (a full
 * or read-only disk, a lost mount, a directory that refuses new entries fail it).
 */
export function writableDirCheck(name: string, dir: string): ReadinessCheck {
  const probe = join(dir, ".readyz");
  return {
    name,
    check: async () => {
      await writeFile(`${probe}.tmp`, `${process.pid}\n`, { mode: 0o600 });
      await rename(`${probe}.tmp`, probe);
      return undefined;
    },
  };
}

/** Ready while a unix socket (an X server's) accepts a connection. */
export function socketCheck(name: string, path: string): ReadinessCheck {
  return {
    name,
    check: () =>
      new Promise<string | undefined>((resolve) => {
        const socket = connect({ path });
        socket.once("connect", () => {
          socket.destroy();
          resolve(undefined);
        });
        socket.once("error", (err: NodeJS.ErrnoException) => resolve(`${path}: ${err.code ?? err.message}`));
      }),
  };
}

/** What readiness asks of the daemon's parts (structural, so this room imports none of them). */
export interface ReadinessParts {
  stateDir: string;
  tokens: { readonly hasPrimary: boolean; readonly tokenPath: string };
  /** The SSH server's status when SSH is on. */
  ssh?: { status(): { available: boolean; reason?: string } };
  /** The desktop's X display (`:1`) when one is configured. */
  display?: string;
}

/**
 * Ready: the state directory takes a write, a token file's token is in force (else nobody can
 * connect), and, when configured, the SSH server listens and the desktop's X server accepts.
 */
export function readinessChecks(parts: ReadinessParts): ReadinessCheck[] {
  const { tokens, ssh } = parts;
  const x = /^(?:unix)?:(\d+)(?:\.\d+)?$/.exec(parts.display ?? "")?.[1];
  return [
    writableDirCheck("state directory", parts.stateDir),
    { name: "token", check: () => (tokens.hasPrimary ? undefined : `${tokens.tokenPath} holds no token`) },
    ...(ssh ? [{ name: "ssh", check: () => (ssh.status().available ? undefined : (ssh.status().reason ?? "not listening")) }] : []),
    ...(x === undefined ? [] : [socketCheck("desktop", `/tmp/.X11-unix/X${x}`)]),
  ];
}
