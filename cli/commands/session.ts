import type { JobStatus } from "../../protocol/common.js";
import type { Command } from "../command.js";
import { parseDuration } from "./core.js";
import { followToStdio } from "./follow.js";
import { exitCodeOf, printResult } from "./print.js";

const USAGE =
  "usage: hotline session open [--cwd D] [--input-wait 3s] [--idle 30m] [--resume S] | run S [--timeout T] -- CMD… | status S | list | close S";

type SessionStatus = { id: string; state: string; cwd: string; job?: string; processes?: { count: number } };

function sessionLine(s: SessionStatus): string {
  const job = s.job ? `  job ${s.job}` : "";
  const processes = s.processes?.count ? `  ${s.processes.count} background process(es)` : "";
  return `${s.id}  ${s.state.padEnd(14)} ${s.cwd}${job}${processes}`;
}

/** `hotline session open`: prints the new session's id (its status with --json). */
async function open({ client, flags, json }: Parameters<Command>[0]): Promise<number> {
  const params: Record<string, unknown> = { cwd: typeof flags.cwd === "string" ? flags.cwd : process.cwd() };
  if (typeof flags["input-wait"] === "string") params.inputWaitMs = parseDuration(flags["input-wait"]);
  if (typeof flags.idle === "string") params.idleTimeoutMs = parseDuration(flags.idle);
  if (typeof flags.resume === "string") {
    params.resume = flags.resume;
    if (typeof flags.cwd !== "string") delete params.cwd; // a resumed session goes back to its own cwd
  }
  const result = await client.request<{ session: SessionStatus; resumed?: { lost: string[] } }>("session.open", params);
  printResult(result, json, (r) => (r.resumed ? `${r.session.id}\nnot carried over: ${r.resumed.lost.join("; ")}` : r.session.id));
  return 0;
}

/**
 * `hotline session run S -- CMD…`: runs the words as one command line in the session, streams its
 * output, and exits with its code. Piped stdin becomes the command's input (EOF at its end); a wait
 * for input is said on stderr once; Ctrl-C cancels the command (the session stays).
 */
async function run({ client, args, flags, json }: Parameters<Command>[0]): Promise<number> {
  const [session, ...words] = args;
  if (!session || words.length === 0) throw new Error(USAGE);
  const params: Record<string, unknown> = { session, command: words.join(" ") };
  if (typeof flags.timeout === "string") params.timeoutMs = parseDuration(flags.timeout);
  const { job } = await client.request<{ job: JobStatus }>("session.run", params);
  const cancel = (): void => void client.request("jobs.cancel", { job: job.id }).catch(() => {});
  process.once("SIGINT", cancel);
  if (!process.stdin.isTTY) {
    process.stdin.on(
      "data",
      (d: Buffer) => void client.request("jobs.input", { job: job.id, data: d.toString("base64"), encoding: "base64" }).catch(() => {}),
    );
    process.stdin.on("end", () => void client.request("jobs.input", { job: job.id, eof: true }).catch(() => {}));
  }
  let told = false;
  const onProgress = (progress: Record<string, unknown>): void => {
    if (progress.phase !== "awaiting input" || told || json) return;
    told = true;
    process.stderr.write(
      `hotline: job ${job.id} waits for input (${JSON.stringify(progress.message)}): hotline send '{"action": "jobs.input", "job": "${job.id}", "data": "…"}'\n`,
    );
  };
  try {
    return exitCodeOf(await followToStdio(client, job.id, { json, onProgress }));
  } finally {
    process.off("SIGINT", cancel);
    process.stdin.pause();
  }
}

export const sessionCommands: Record<string, Command> = {
  session: async (ctx) => {
    const [verb, ...rest] = ctx.args;
    const { client, json } = ctx;
    switch (verb) {
      case "open":
        return open(ctx);
      case "run":
        return run({ ...ctx, args: rest });
      case "status": {
        const result = await client.request<{ session: SessionStatus }>("session.status", { session: rest[0] });
        printResult(result, json, (r) => sessionLine(r.session));
        return 0;
      }
      case "list": {
        const result = await client.request<{ sessions: SessionStatus[] }>("session.list");
        printResult(result, json, (r) => r.sessions.map(sessionLine).join("\n") || "no sessions");
        return 0;
      }
      case "close": {
        const result = await client.request<{ session: SessionStatus }>("session.close", { session: rest[0] });
        printResult(result, json, (r) => sessionLine(r.session));
        return 0;
      }
      default:
        throw new Error(USAGE);
    }
  },
};
