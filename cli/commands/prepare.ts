import { resolve } from "node:path";
import type { JobStatus } from "../../protocol/common.js";
import type { Command } from "../commands.js";
import { followToStdio } from "./follow.js";
import { exitCodeOf, printResult } from "./print.js";

/** One line of progress, redrawn in place: "[#####.....] 3/9 builds  [3/9 built, …] building x". */
function progressLine(p: Record<string, unknown>): string {
  const done = Number(p.done ?? 0);
  const total = typeof p.total === "number" ? p.total : null;
  const width = 24;
  const filled = total && total > 0 ? Math.min(width, Math.round((done / total) * width)) : 0;
  const bar = total ? `[${"#".repeat(filled)}${".".repeat(width - filled)}] ${done}/${total} ${String(p.unit ?? "")}` : String(p.phase ?? "");
  const line = `${bar}  ${String(p.message ?? "")}`;
  return line.length > (process.stderr.columns ?? 100) - 1 ? `${line.slice(0, (process.stderr.columns ?? 100) - 2)}…` : line;
}

const prepare: Command = async ({ client, args, flags, json, tty }) => {
  const params: Record<string, unknown> = { workspace: resolve(typeof flags.workspace === "string" ? flags.workspace : process.cwd()) };
  if (typeof flags.flake === "string") params.flake = flags.flake;
  if (args.length > 0) params.packages = args;
  if (flags["update-lock"] === true) params.updateLock = true;
  const reply = await client.request<{ ready: boolean; environment?: Record<string, unknown>; job?: JobStatus }>("prepare", params);
  if (reply.ready) {
    printResult(reply, json, () => `ready: ${String(reply.environment?.workspace)} (${(reply.environment?.variables as string[]).length} variables, cache ${String(reply.environment?.cacheKey).slice(0, 12)})`);
    return 0;
  }
  const job = reply.job!;
  const live = tty && process.stderr.isTTY === true && !json;
  const onProgress = live ? (p: Record<string, unknown>) => process.stderr.write(`\r\u001b[2K${progressLine(p)}`) : undefined;
  const cancel = (): void => void client.request("jobs.cancel", { job: job.id }).catch(() => {});
  process.once("SIGINT", cancel);
  const final = await followToStdio(client, job.id, 0, onProgress);
  if (live) process.stderr.write("\r\u001b[2K");
  printResult(final, json, () => (final.state === "succeeded" ? `ready: ${params.workspace as string}` : `prepare ${final.state}: ${final.error?.message ?? ""}`));
  return exitCodeOf(final);
};

/** The environment a job in DIR gets, as the daemon composes it (asked of a real job, so it cannot drift). */
const env: Command = async ({ client, args, json }) => {
  const cwd = resolve(args[0] ?? process.cwd());
  const reply = await client.request<{ job: JobStatus; output?: { data: string; encoding: string } }>("shell", { command: ["env", "-0"], cwd, wait: 30_000 });
  if (!reply.output || reply.job.state !== "succeeded") throw new Error(`could not read the environment in ${cwd} (job ${reply.job.id} ${reply.job.state})`);
  const text = Buffer.from(reply.output.data, reply.output.encoding === "base64" ? "base64" : "utf8").toString("utf8");
  const vars: Record<string, string> = {};
  for (const entry of text.split("\0")) {
    const eq = entry.indexOf("=");
    if (eq > 0) vars[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  const sorted = Object.fromEntries(Object.entries(vars).sort(([a], [b]) => a.localeCompare(b)));
  printResult(sorted, json, () => Object.entries(sorted).map(([k, v]) => `${k}=${v}`).join("\n"));
  return 0;
};

export const prepareCommands: Record<string, Command> = { prepare, env };
