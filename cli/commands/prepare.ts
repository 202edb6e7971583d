import { resolve } from "node:path";
import type { JobStatus } from "../../protocol/common.js";
import type { Command } from "../command.js";
import { followToStdio } from "./follow.js";
import { LiveLine } from "./live-line.js";
import { endedText, exitCodeOf, printResult } from "./print.js";

/** "[#####.....] 3/9 builds  [3/9 built, …] building x" (LiveLine cuts it to the terminal's width). */
function progressLine(p: Record<string, unknown>): string {
  const done = Number(p.done ?? 0);
  const total = typeof p.total === "number" ? p.total : null;
  const width = 24;
  const filled = total && total > 0 ? Math.min(width, Math.round((done / total) * width)) : 0;
  const bar = total
    ? `[${"#".repeat(filled)}${".".repeat(width - filled)}] ${done}/${total} ${String(p.unit ?? "")}`
    : String(p.phase ?? "");
  return `${bar}  ${String(p.message ?? "")}`;
}

/** Who cancelled a prepare: this terminal's Ctrl-C, or someone else's jobs.cancel. */
function cancelledText(job: string, byThisTerminal: boolean): string {
  return byThisTerminal
    ? `prepare cancelled: you pressed Ctrl-C (job ${job})`
    : `prepare cancelled by another client: a jobs.cancel of job ${job} (hotline cancel ${job}) from another connection`;
}

const prepare: Command = async ({ client, args, flags, json, tty }) => {
  const params: Record<string, unknown> = { workspace: resolve(typeof flags.workspace === "string" ? flags.workspace : process.cwd()) };
  if (typeof flags.flake === "string") params.flake = flags.flake;
  if (args.length > 0) params.packages = args;
  if (flags["update-lock"] === true) params.updateLock = true;
  const reply = await client.request<{
    ready: boolean;
    environment?: Record<string, unknown>;
    restored?: { from: string; paths: number };
    job?: JobStatus;
  }>("prepare", params);
  if (reply.ready) {
    printResult(
      reply,
      json,
      (reply) =>
        `ready: ${String(reply.environment?.workspace)} (${(reply.environment?.variables as string[] | undefined)?.length ?? 0} variables, cache ${String(reply.environment?.cacheKey).slice(0, 12)})` +
        (reply.restored ? `; restored ${reply.restored.paths} store path(s) from ${reply.restored.from}, nothing built` : ""),
    );
    return 0;
  }
  const job = reply.job!;
  const live = tty && process.stderr.isTTY === true && !json;
  const line = live ? new LiveLine(process.stderr) : undefined;
  const onProgress = line ? (p: Record<string, unknown>) => line.draw(progressLine(p)) : undefined;
  let cancelledHere = false;
  const cancel = (): void => {
    cancelledHere = true;
    void client.request("jobs.cancel", { job: job.id }).catch(() => {});
  };
  process.once("SIGINT", cancel);
  const final = await followToStdio(client, job.id, { live: line, onProgress }).finally(() => {
    process.off("SIGINT", cancel);
    line?.clear();
  });
  printResult(final, json, (final) =>
    final.state === "succeeded"
      ? `ready: ${params.workspace as string}`
      : final.state === "cancelled"
        ? cancelledText(job.id, cancelledHere)
        : endedText("prepare", final),
  );
  return exitCodeOf(final);
};

/** The environment a job in DIR gets, as the daemon composes it (asked of a real job, so it cannot drift). */
const env: Command = async ({ client, args, json }) => {
  const cwd = resolve(args[0] ?? process.cwd());
  const reply = await client.request<{ job: JobStatus; output?: { data: string; encoding: string } }>("shell", {
    command: ["env", "-0"],
    cwd,
    wait: 30_000,
  });
  if (!reply.output || reply.job.state !== "succeeded")
    throw new Error(`could not read the environment in ${cwd} (job ${reply.job.id} ${reply.job.state})`);
  const text = Buffer.from(reply.output.data, reply.output.encoding === "base64" ? "base64" : "utf8").toString("utf8");
  const vars: Record<string, string> = {};
  for (const entry of text.split("\0")) {
    const eq = entry.indexOf("=");
    if (eq > 0) vars[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  const sorted = Object.fromEntries(Object.entries(vars).sort(([a], [b]) => a.localeCompare(b)));
  printResult(sorted, json, (sorted) =>
    Object.entries(sorted)
      .map(([k, v]) => `${k}=${v}`)
      .join("\n"),
  );
  return 0;
};

export const prepareCommands: Record<string, Command> = { prepare, env };
