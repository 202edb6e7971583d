import { resolve } from "node:path";
import type { JobStatus } from "../../protocol/common.js";
import type { Command, CommandContext } from "../command.js";
import { followToStdio, untilJobExit } from "./follow.js";
import { LiveLine } from "./live-line.js";
import { displayText } from "../display.js";
import { cliErrorText } from "../flag-names.js";
import { endedText, exitCodeOf, printResult } from "./print.js";

/** `hotline download`, `hotline extract`, `hotline run`: the files.* actions, followed to the end. */

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];

function humanBytes(n: number): string {
  let v = n;
  let i = 0;
  while (v >= 1024 && i < UNITS.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${UNITS[i]}`;
}

/** "download [##########..............]  40%  12.0 MiB / 30.0 MiB" — redrawn in place on a TTY. */
function bar(p: Record<string, unknown>): string {
  const done = Number(p.done ?? 0);
  const total = typeof p.total === "number" && p.total > 0 ? p.total : null;
  const fmt = p.unit === "bytes" ? humanBytes : String;
  const width = 24;
  const filled = total ? Math.min(width, Math.round((done / total) * width)) : 0;
  const amount = total ? `${String(Math.floor((done / total) * 100)).padStart(3)}%  ${fmt(done)} / ${fmt(total)}` : fmt(done);
  const detail = total ? `[${"#".repeat(filled)}${".".repeat(width - filled)}]  ${amount}` : done > 0 ? amount : String(p.message ?? "");
  return `${String(p.phase ?? "")} ${detail}`;
}

/** Follows a file job with a progress bar on a TTY; Ctrl-C cancels it (and its partial files). */
async function followFileJob(
  { client, json, tty }: CommandContext,
  job: JobStatus,
  describe: (final: JobStatus) => string,
): Promise<number> {
  const live = tty && process.stderr.isTTY === true && !json;
  const line = new LiveLine(process.stderr);
  const onProgress = live ? (p: Record<string, unknown>) => line.draw(bar(p)) : undefined;
  const cancel = (): void => void client.request("jobs.cancel", { job: job.id }).catch(() => {});
  process.once("SIGINT", cancel);
  // The job's output (one summary line) is not echoed: the final status is printed instead.
  const final = await untilJobExit(client, job.id, { onProgress }).finally(() => {
    process.off("SIGINT", cancel);
    line.clear();
  });
  printResult(final, json, (final) => describe(final));
  return exitCodeOf(final);
}

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

function common(flags: CommandContext["flags"]): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  const timeout = str(flags.timeout);
  if (timeout) params.timeoutMs = parseDuration(timeout);
  return params;
}

function parseDuration(text: string): number {
  const m = /^(\d+)(ms|s|m|h)?$/.exec(text);
  if (!m) throw new Error(`bad --timeout ${text}: use e.g. 30s, 15m, 2h`);
  return Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? "s") as "s"];
}

const download: Command = async (ctx) => {
  const { client, args, flags } = ctx;
  const repo = str(flags.github);
  if ((args.length === 1) === (repo !== undefined)) {
    throw new Error(
      "usage: hotline download URL [--dest PATH] [--sha256 HEX | --sha256-sums URL] [--overwrite]\n       hotline download --github OWNER/NAME [--tag TAG|latest] --asset GLOB [--dest PATH] …",
    );
  }
  // A directory (the current one by default) keeps the server's file name.
  const destFlag = str(flags.dest);
  const dest = destFlag ? resolve(destFlag) + (destFlag.endsWith("/") ? "/" : "") : `${process.cwd()}/`;
  const params: Record<string, unknown> = { dest, ...common(flags) };
  if (repo) params.github = { repo, tag: str(flags.tag) ?? "latest", asset: str(flags.asset) ?? "*" };
  else params.url = args[0];
  if (str(flags.sha256)) params.sha256 = flags.sha256;
  // With --github a sums file that is no URL is an asset of the same release.
  const sums = str(flags["sha256-sums"]);
  if (sums) params.sha256sums = repo && !/^https?:\/\//.test(sums) ? { asset: sums } : { url: sums };
  if (flags.overwrite === true) params.overwrite = true;
  const { job } = await client.request<{ job: JobStatus }>("files.download", params);
  return followFileJob(ctx, job, (f) =>
    f.state === "succeeded"
      ? `${String(f.result?.path)}  ${humanBytes(Number(f.result?.size))}  sha256 ${String(f.result?.sha256)}`
      : endedText("download", f),
  );
};

const extract: Command = async (ctx) => {
  const { client, args, flags } = ctx;
  if (args.length !== 2) throw new Error("usage: hotline extract ARCHIVE DEST [--strip N] [--format tar|tar.gz|tar.xz|tar.zst|zip]");
  const params: Record<string, unknown> = { archive: resolve(args[0]!), dest: resolve(args[1]!), ...common(flags) };
  if (str(flags.strip)) params.strip = Number(flags.strip);
  if (str(flags.format)) params.format = flags.format;
  const { job } = await client.request<{ job: JobStatus }>("files.extract", params);
  return followFileJob(ctx, job, (f) =>
    f.state === "succeeded"
      ? `${String(f.result?.dest)}  ${String(f.result?.entries)} entries, ${humanBytes(Number(f.result?.bytes))}`
      : endedText("extract", f),
  );
};

const run: Command = async ({ client, args, flags }) => {
  if (args.length === 0) throw new Error("usage: hotline run SCRIPT [--interpreter bash|sh|python3] [--cwd D] [--timeout 5m] [-- ARGS…]");
  const params: Record<string, unknown> = { path: resolve(args[0]!), args: args.slice(1), ...common(flags) };
  if (str(flags.interpreter)) params.interpreter = flags.interpreter;
  if (str(flags.cwd)) params.cwd = resolve(str(flags.cwd)!);
  if (!process.stdin.isTTY) params.stdin = true;
  const { job } = await client.request<{ job: JobStatus }>("files.run", params);
  const cancel = (): void => void client.request("jobs.cancel", { job: job.id }).catch(() => {});
  process.once("SIGINT", cancel);
  if (params.stdin === true) {
    process.stdin.on(
      "data",
      (d: Buffer) => void client.request("jobs.input", { job: job.id, data: d.toString("base64"), encoding: "base64" }).catch(() => {}),
    );
    process.stdin.on("end", () => void client.request("jobs.input", { job: job.id, eof: true }).catch(() => {}));
  }
  const final = await followToStdio(client, job.id).finally(() => {
    process.stdin.pause();
    process.off("SIGINT", cancel);
  });
  if (final.error && final.state === "failed" && final.exitCode === undefined)
    process.stderr.write(`hotline: ${displayText(cliErrorText(final.error))}\n`);
  return exitCodeOf(final);
};

export const fileCommands: Record<string, Command> = { download, extract, run };
