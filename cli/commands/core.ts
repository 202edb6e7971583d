import type { JobStatus } from "../../protocol/common.js";
import type { Command } from "../command.js";
import { followToStdio } from "./follow.js";
import { exitCodeOf, printResult } from "./print.js";
import { catalogSummary, infoSummary } from "./summaries.js";

// On a terminal a summary; otherwise (piped, or --json) the JSON scripts have always read.
const state: Command = async ({ client, args, json, tty }) => {
  const what = args[0] ?? "info";
  if (!["info", "guide", "catalog"].includes(what)) throw new Error(`state ${what}: expected info, guide or catalog`);
  // `state guide jobs`: one section of the guide (its core without one, "all" for the whole text).
  const params = what === "guide" && args[1] !== undefined ? { section: args[1] } : {};
  const result = await client.request(`state.${what}`, params);
  if (what === "guide" && !json) process.stdout.write(String(result.text));
  else if (what === "info") printResult(result, json || !tty, (result) => infoSummary(result));
  else printResult(result, json || !tty, (result) => catalogSummary(result));
  return 0;
};

/** `30s`, `15m`, `2h`, `7d`, `500ms` (a bare number is seconds) → milliseconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+)(ms|s|m|h|d)?$/.exec(text);
  if (!m) throw new Error(`bad duration ${text}: use e.g. 30s, 15m, 2h`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(m[2] ?? "s") as "s"];
  return Number(m[1]) * unit;
}

const shell: Command = async ({ client, args, flags, json }) => {
  if (args.length === 0) throw new Error("usage: hotline shell [--cwd D] [--pty] -- CMD…");
  const pty = flags.pty === true;
  const params: Record<string, unknown> = {
    command: args.length === 1 ? args[0] : args,
    cwd: typeof flags.cwd === "string" ? flags.cwd : process.cwd(),
  };
  if (pty) params.pty = { cols: process.stdout.columns ?? 80, rows: process.stdout.rows ?? 24 };
  else if (!process.stdin.isTTY) params.stdin = true;
  const { job } = await client.request<{ job: JobStatus }>("shell", params);
  const cancel = (): void => void client.request("jobs.cancel", { job: job.id }).catch(() => {});
  if (pty && process.stdin.isTTY) {
    process.stdin.setRawMode(true);
    process.stdout.on(
      "resize",
      () => void client.request("jobs.resize", { job: job.id, cols: process.stdout.columns, rows: process.stdout.rows }).catch(() => {}),
    );
  } else process.once("SIGINT", cancel);
  if (pty || params.stdin === true) {
    process.stdin.on(
      "data",
      (d: Buffer) => void client.request("jobs.input", { job: job.id, data: d.toString("base64"), encoding: "base64" }).catch(() => {}),
    );
    process.stdin.on("end", () => void client.request("jobs.input", { job: job.id, eof: true }).catch(() => {}));
  }
  try {
    return exitCodeOf(await followToStdio(client, job.id, { json }));
  } finally {
    if (pty && process.stdin.isTTY) process.stdin.setRawMode(false);
    process.stdin.pause();
    process.off("SIGINT", cancel);
  }
};

const token: Command = async ({ client, args, flags, json }) => {
  if (args[0] !== "create") throw new Error("usage: hotline token create --scope observe|manage [--ttl 15m]");
  const params: Record<string, unknown> = { scope: flags.scope ?? "observe" };
  if (typeof flags.ttl === "string") params.ttlMs = parseDuration(flags.ttl);
  const result = await client.request("tokens.create", params);
  printResult(result, json, (result) => String(result.token));
  return 0;
};

const send: Command = async ({ client, args }) => {
  const frame = JSON.parse(args[0] ?? "") as Record<string, unknown>;
  const { action, id: _id, ...params } = frame;
  const result = await client.request(String(action), params);
  printResult(result, true);
  return 0;
};

export const coreCommands: Record<string, Command> = { state, shell, token, send };
