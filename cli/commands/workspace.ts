import type { JobStatus } from "../../protocol/common.js";
import type { CliClient } from "../client.js";
import type { Command, CommandContext } from "../command.js";
import { followToStdio } from "./follow.js";
import { endedText, exitCodeOf, printResult } from "./print.js";

/** Verbs of the coding workspace: `hotline repos …`, `hotline tasks …`, `hotline secrets write`. */

type Row = Record<string, unknown>;

function str(flags: CommandContext["flags"], name: string): string | undefined {
  const v = flags[name];
  return typeof v === "string" ? v : undefined;
}

function short(commit: unknown): string {
  return typeof commit === "string" ? commit.slice(0, 12) : "-";
}

/** Starts a workspace job, streams its output, and prints its result (job.result) when it succeeds. */
async function runJob(client: CliClient, action: string, params: Row, json: boolean, human: (r: Row) => string): Promise<number> {
  const { job } = await client.request<{ job: JobStatus }>(action, params);
  const cancel = (): void => void client.request("jobs.cancel", { job: job.id }).catch(() => {});
  process.once("SIGINT", cancel);
  const final = await followToStdio(client, job.id).finally(() => process.off("SIGINT", cancel));
  if (final.state === "succeeded" && final.result) printResult(final.result, json, (result) => human(result));
  else printResult(final, json, (final) => endedText(action, final));
  return exitCodeOf(final);
}

const REPOS_USAGE = "usage: hotline repos add [REPO] [--origin URL | --path DIR] | list | snapshot [REPO] [--ref REF] | bundle [REPO]";

const repos: Command = async ({ client, args, flags, json }) => {
  const [sub, repo] = args;
  const base: Row = repo !== undefined ? { repo } : {};
  switch (sub) {
    case "add": {
      const url = str(flags, "origin");
      const path = str(flags, "path");
      return runJob(
        client,
        "repos.add",
        { ...base, ...(url ? { url } : {}), ...(path ? { path } : {}) },
        json,
        (r) => `${String(r.repo)}: ${String(r.path)} (${String(r.branch)} @ ${short(r.commit)})`,
      );
    }
    case "list": {
      const { repos: list } = await client.request<{ repos: Row[] }>("repos.list");
      printResult(
        { repos: list },
        json,
        ({ repos: list }) =>
          list
            .map(
              (r) =>
                `${String(r.repo).padEnd(16)} ${String(r.branch ?? "(detached)").padEnd(12)} ${short(r.commit)}  ${String(r.path)}${r.origin ? `  ${String(r.origin)}` : ""}`,
            )
            .join("\n") || "(no repositories)",
      );
      return 0;
    }
    case "snapshot": {
      const ref = str(flags, "ref");
      return runJob(client, "repos.snapshot", { ...base, ...(ref ? { ref } : {}) }, json, (r) => String(r.path));
    }
    case "bundle":
      return runJob(client, "repos.bundle", base, json, (r) => String(r.path));
    default:
      throw new Error(REPOS_USAGE);
  }
};

const TASKS_USAGE =
  "usage: hotline tasks create TASK [--repo R] [--base REF] | list [--repo R] | commit TASK -m MSG | merge TASK [--into BRANCH] | remove TASK [--force]";

const tasks: Command = async ({ client, args, flags, json }) => {
  const [sub, task] = args;
  if (sub === "list") {
    const repo = str(flags, "repo");
    const { tasks: list } = await client.request<{ tasks: Row[] }>("tasks.list", repo ? { repo } : {});
    printResult(
      { tasks: list },
      json,
      ({ tasks: list }) =>
        list.map((t) => `${String(t.task).padEnd(20)} ${String(t.repo).padEnd(12)} ${short(t.commit)}  ${String(t.path)}`).join("\n") ||
        "(no tasks)",
    );
    return 0;
  }
  if (task === undefined) throw new Error(TASKS_USAGE);
  let result: Row;
  switch (sub) {
    case "create": {
      const repo = str(flags, "repo");
      const base = str(flags, "base");
      result = await client.request("tasks.create", { task, ...(repo ? { repo } : {}), ...(base ? { base } : {}) });
      printResult(result, json, (result) => `${String(result.path)} (branch ${String(result.branch)} @ ${short(result.commit)})`);
      return 0;
    }
    case "commit": {
      const message = str(flags, "message");
      if (!message) throw new Error("usage: hotline tasks commit TASK -m MESSAGE");
      result = await client.request("tasks.commit", { task, message });
      printResult(result, json, (result) =>
        result.committed ? `${short(result.commit)} on ${String(result.branch)} (${String(result.fileCount)} files)` : "nothing to commit",
      );
      return 0;
    }
    case "merge": {
      const into = str(flags, "into");
      result = await client.request("tasks.merge", { task, ...(into ? { into } : {}) });
      printResult(result, json, (result) =>
        result.merged
          ? `merged ${String(result.branch)} into ${String(result.into)} @ ${short(result.commit)}`
          : `${String(result.into)} already contains ${String(result.branch)}`,
      );
      return 0;
    }
    case "remove":
      result = await client.request("tasks.remove", { task, ...(flags.force === true ? { force: true } : {}) });
      printResult(
        result,
        json,
        (result) =>
          `removed ${task}${result.branchDeleted ? ` and branch ${String(result.branch)}` : ` (branch ${String(result.branch)} kept: not merged)`}`,
      );
      return 0;
    default:
      throw new Error(TASKS_USAGE);
  }
};

/** Reads NAME=VALUE lines (blank lines and # comments skipped; the value is everything after the first '='). */
export function parseSecretLines(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === "" || line.trimStart().startsWith("#")) continue;
    const eq = line.indexOf("=");
    if (eq <= 0) throw new Error("secrets write: each stdin line must be NAME=VALUE");
    values[line.slice(0, eq).trim()] = line.slice(eq + 1);
  }
  return values;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

// Values come from stdin only: argv is visible to every process on the machine.
const secrets: Command = async ({ client, args, flags, json }) => {
  const repo = str(flags, "repo");
  const task = str(flags, "task");
  if (args[0] !== "write" || (repo === undefined) === (task === undefined))
    throw new Error("usage: hotline secrets write (--repo R | --task T) < lines of NAME=VALUE");
  const values = parseSecretLines(await readStdin());
  const result = await client.request<Row>("secrets.write", { ...(repo ? { repo } : { task }), values });
  printResult(result, json, (result) => `${String(result.path)}: ${(result.names as string[]).join(", ")}`);
  return 0;
};

export const workspaceCommands: Record<string, Command> = { repos, tasks, secrets };
