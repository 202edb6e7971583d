import type { JobStatus } from "../../protocol/common.js";
import type { Command } from "../command.js";
import { followToStdio } from "./follow.js";
import { jobLine, printResult } from "./print.js";
import { jobsTable } from "./summaries.js";

const jobs: Command = async ({ client, flags, json }) => {
  const params: Record<string, unknown> = {};
  if (typeof flags.state === "string") params.state = flags.state;
  if (typeof flags.kind === "string") params.kind = flags.kind;
  if (typeof flags.limit === "string") params.limit = Number(flags.limit);
  if (typeof flags.sort === "string") params.sort = flags.sort;
  const result = await client.request<{ jobs: JobStatus[]; more: boolean }>("jobs.list", params);
  printResult(result, json, (result) => jobsTable(result.jobs, result.more));
  return 0;
};

const status: Command = async ({ client, args, json }) => {
  const result = await client.request<JobStatus>("jobs.status", { job: args[0] });
  printResult(result, json, (result) => jobLine(result));
  return 0;
};

const tail: Command = async ({ client, args, flags, json }) => {
  const job = args[0];
  let from = typeof flags.from === "string" ? Number(flags.from) : 0;
  if (flags.follow === true) {
    await followToStdio(client, job!, { from, json });
    return 0;
  }
  for (;;) {
    const out = await client.request<{ data: string; encoding: string; next: number; eof: boolean }>("jobs.output", { job, from });
    if (json) process.stdout.write(`${JSON.stringify(out)}\n`);
    else process.stdout.write(Buffer.from(out.data, out.encoding === "base64" ? "base64" : "utf8"));
    if (out.next === from) return 0;
    from = out.next;
  }
};

const cancel: Command = async ({ client, args, json }) => {
  const result = await client.request<JobStatus>("jobs.cancel", { job: args[0] });
  printResult(result, json, (result) => jobLine(result));
  return 0;
};

export const jobCommands: Record<string, Command> = { jobs, status, tail, cancel };
