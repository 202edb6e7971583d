import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { CodeOutput, CodeRunResult, ContextStatus } from "../../protocol/actions/code.js";
import type { JobStatus } from "../../protocol/common.js";
import type { CliClient } from "../client.js";
import type { Command } from "../command.js";
import { displayText } from "../display.js";
import { EXIT } from "../exit-codes.js";
import { parseDuration } from "./core.js";
import { followToStdio } from "./follow.js";
import { printResult } from "./print.js";

const USAGE =
  "usage: hotline code run [--context C] [-l python|javascript] [--timeout 5m] [-o DIR] FILE|-   (also: hotline code list | restart C | remove C)";

const IMAGE_EXTENSIONS: Record<string, string> = { "image/png": "png", "image/jpeg": "jpg", "image/svg+xml": "svg" };

/** A run's exit code: 0 ok, 1 error, 130 interrupted, 124 timed out. */
function exitCodeOfRun(result: CodeRunResult | undefined, job: JobStatus): number {
  if (!result) return job.state === "succeeded" ? 0 : 1;
  return { ok: 0, error: 1, interrupted: 130, timed_out: 124 }[result.status];
}

async function readCode(source: string): Promise<string> {
  if (source !== "-") return readFile(source, "utf8");
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** A code run's file, read whole with code.file. */
async function runFile(client: CliClient, job: string, file: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  for (let offset = 0; ; ) {
    const page = await client.request("code.file", { job, file, offset });
    parts.push(Buffer.from(page.data, "base64"));
    if (page.eof) return Buffer.concat(parts);
    offset = page.next;
  }
}

/** Writes the output's images into `dir` (`<job>-<n>.<ext>`); resolves with a line per file. */
async function saveImages(client: CliClient, job: string, output: CodeOutput, dir: string, counter: { n: number }): Promise<string[]> {
  const lines: string[] = [];
  for (const [mime, ext] of Object.entries(IMAGE_EXTENSIONS)) {
    const inline = output.data[mime];
    const file = output.files?.[mime];
    if (typeof inline !== "string" && !file) continue;
    const bytes =
      typeof inline === "string"
        ? Buffer.from(inline, mime === "image/svg+xml" ? "utf8" : "base64")
        : await runFile(client, job, file!.file);
    const path = join(dir, `${job}-${++counter.n}.${ext}`);
    await mkdir(dir, { recursive: true }); // `-o figures/` need not exist yet, as with curl --create-dirs
    await writeFile(path, bytes);
    const size = output.metadata?.[mime] as { width?: number; height?: number } | undefined;
    lines.push(`${mime === "image/svg+xml" ? "image" : "figure"}: ${path}${size?.width ? ` (${size.width}x${size.height})` : ""}`);
  }
  return lines;
}

/** How a person sees a run's result: values on stdout, figures as files, the error and notices on stderr. */
async function showResult(client: CliClient, job: string, result: CodeRunResult, dir: string): Promise<void> {
  if (result.contextRestarted) {
    const lost = result.lost?.length ? ` (lost: ${result.lost.join(", ")})` : "";
    process.stderr.write(
      `hotline: context ${result.context} was restarted, its state is gone: ${displayText(result.restartReason ?? "")}${lost}\n`,
    );
  }
  const counter = { n: 0 };
  for (const output of result.outputs) {
    const images = await saveImages(client, job, output, dir, counter);
    for (const line of images) process.stderr.write(`${line}\n`);
    const text = output.data["text/plain"];
    if (typeof text === "string" && !(images.length && /^<Figure/.test(text))) process.stdout.write(`${displayText(text)}\n`);
  }
  if (result.error) {
    const lines = result.error.traceback.length ? result.error.traceback : [`${result.error.name}: ${result.error.value}`];
    process.stderr.write(`${displayText(lines.join("\n"))}\n`);
  }
  for (const o of result.omitted ?? []) process.stderr.write(`hotline: omitted ${o.mime} (${o.bytes} bytes): ${displayText(o.why)}\n`);
  if (result.status === "timed_out") process.stderr.write("hotline: the run timed out\n");
}

/** `hotline code run FILE|-`: runs code in a context, streams its output, prints its values and saves its figures. */
async function runCode({ client, args, flags, json }: Parameters<Command>[0]): Promise<number> {
  const source = args[1];
  if (!source || args.length > 2) {
    process.stderr.write(`${USAGE}\n`);
    return EXIT.usage;
  }
  const params: Record<string, unknown> = { code: await readCode(source) };
  if (typeof flags.context === "string") params.context = flags.context;
  if (typeof flags.language === "string") params.language = flags.language;
  if (typeof flags.timeout === "string") params.timeoutMs = parseDuration(flags.timeout);
  const dir = typeof flags.output === "string" ? flags.output : process.cwd();
  const { job } = await client.request<{ job: JobStatus }>("code.run", params);
  // Ctrl-C interrupts the run (SIGINT to the interpreter), as in a REPL; the context stays.
  const interrupt = (): void => void client.request("jobs.cancel", { job: job.id, signal: "SIGINT" }).catch(() => {});
  process.once("SIGINT", interrupt);
  let status: JobStatus;
  try {
    status = await followToStdio(client, job.id, { json });
  } finally {
    process.off("SIGINT", interrupt);
  }
  const result = status.result as CodeRunResult | undefined;
  if (json) process.stdout.write(`${JSON.stringify({ job: { ...status, result: undefined }, result })}\n`);
  else if (result) await showResult(client, job.id, result, dir);
  return exitCodeOfRun(result, status);
}

const contextLine = (c: ContextStatus): string =>
  `${c.id}  ${c.language.padEnd(10)} ${c.state.padEnd(9)} gen ${c.generation}  runs ${c.executionCount}${c.default ? "  default" : ""}  ${c.cwd}`;

/** `hotline code run|list|restart|remove`: the code contexts. */
const code: Command = async (ctx) => {
  const { client, args, json } = ctx;
  switch (args[0]) {
    case "run":
      return runCode(ctx);
    case "list": {
      const listed = await client.request("code.context.list", {});
      printResult(listed, json, (shown) => shown.contexts.map(contextLine).join("\n") || "(no code contexts)");
      return 0;
    }
    case "restart":
    case "remove": {
      if (!args[1]) break;
      const action = args[0] === "restart" ? "code.context.restart" : "code.context.remove";
      printResult(await client.request(action, { context: args[1] }), true);
      return 0;
    }
  }
  process.stderr.write(`${USAGE}\n`);
  return EXIT.usage;
};

export const codeCommands: Record<string, Command> = { code };
