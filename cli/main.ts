#!/usr/bin/env -S node --max-semi-space-size=1
import { parseArgs } from "node:util";
import { loadConfig } from "../daemon/config.js";
import { discover, HotlineClient, RequestFailed } from "./client.js";
import { COMMANDS, type CommandContext } from "./commands.js";

const USAGE = `hotline — the in-sandbox agent daemon and its CLI

  hotline daemon [--port N] [--host H] …      start the daemon in the foreground
  hotline state info|guide|catalog            what the daemon is / the agent guide / Nix inputs
  hotline shell [--cwd D] [--pty] -- CMD…     run a command, stream its output, exit with its code
  hotline jobs [--state S] [--limit N]        list jobs, newest first
  hotline status JOB                          one job's status
  hotline tail [-f] [--from N] JOB            print a job's output (-f: follow until it ends)
  hotline cancel JOB                          cancel a job (its whole process group)
  hotline prepare [--workspace DIR] [--flake REF] [--update-lock] [PKG…]   a Nix environment for a workspace
  hotline env [DIR]                           the environment a job in DIR would get
  hotline download URL|--github OWNER/NAME [--tag T] --asset GLOB [--dest P] [--sha256 H] [--overwrite]
  hotline extract ARCHIVE DEST [--strip N] [--format F]   unpack into a new directory, refusing unsafe entries
  hotline run SCRIPT [--interpreter bash|sh|python3] [--cwd D] [-- ARGS…]   run a script as a job
  hotline token create --scope observe [--ttl 15m]   issue a token
  hotline repos add [REPO] [--url U|--path D]  clone (or git init) a repository's shared clone
  hotline repos list|snapshot [REPO] [--ref R]|bundle [REPO]   list; tar.gz of a tree; git bundle
  hotline tasks create TASK [--repo R] [--base REF]   a worktree on branch task-TASK
  hotline tasks list|commit TASK -m MSG|merge TASK [--into B]|remove TASK [--force]
  hotline secrets write --repo R|--task T < NAME=VALUE lines   the root .env (never committed)
  hotline cat FILE…                           print files byte-exact (files.read)
  hotline put FILE < DATA [--if-match SHA|absent] [--mode 0644] [--parents]   write stdin atomically
  hotline ls [DIR] [--depth N] [--glob G] [--hidden] [--gitignore]   list a directory
  hotline grep PATTERN [DIR] [--regex] [--glob G] [--limit N]   search files (git grep)
  hotline send '<json>'                       send one raw action, print the reply
Common flags: --json (machine output), --state-dir, --config-dir`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === "help" || command === "--help" || command === "-h") {
    process.stdout.write(`${USAGE}\n`);
    return command ? 0 : 2;
  }
  if (command === "daemon") {
    const { runDaemon } = await import("../daemon/main.js");
    await runDaemon(rest);
    return -1; // keeps running
  }
  const run = COMMANDS[command];
  if (!run) {
    process.stderr.write(`hotline: unknown command ${command}\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parseArgs({
    args: rest,
    options: {
      json: { type: "boolean" },
      "state-dir": { type: "string" },
      "config-dir": { type: "string" },
      cwd: { type: "string" },
      pty: { type: "boolean" },
      follow: { type: "boolean", short: "f" },
      from: { type: "string" },
      state: { type: "string" },
      kind: { type: "string" },
      limit: { type: "string" },
      scope: { type: "string" },
      ttl: { type: "string" },
      workspace: { type: "string" },
      flake: { type: "string" },
      sha256: { type: "string" },
      dest: { type: "string" },
      strip: { type: "string" },
      interpreter: { type: "string" },
      github: { type: "string" },
      tag: { type: "string" },
      asset: { type: "string" },
      format: { type: "string" },
      overwrite: { type: "boolean" },
      timeout: { type: "string" },
      url: { type: "string" },
      path: { type: "string" },
      ref: { type: "string" },
      repo: { type: "string" },
      task: { type: "string" },
      base: { type: "string" },
      into: { type: "string" },
      message: { type: "string", short: "m" },
      force: { type: "boolean" },
      "if-match": { type: "string" },
      mode: { type: "string" },
      parents: { type: "boolean" },
      depth: { type: "string" },
      glob: { type: "string" },
      hidden: { type: "boolean" },
      gitignore: { type: "boolean" },
      regex: { type: "boolean" },
    },
    allowPositionals: true,
    strict: false,
  });
  const flags: Record<string, string | undefined> = {};
  if (typeof values["state-dir"] === "string") flags["state-dir"] = values["state-dir"];
  if (typeof values["config-dir"] === "string") flags["config-dir"] = values["config-dir"];
  const config = loadConfig(flags);
  const { url, token } = discover(config.stateDir, config.configDir);
  const client = await HotlineClient.connect(url, token);
  const ctx: CommandContext = { client, args: positionals, flags: values, json: values.json === true, tty: process.stdout.isTTY === true };
  try {
    return await run(ctx);
  } finally {
    client.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof RequestFailed) process.stderr.write(`hotline: ${err.message}\n`);
    else process.stderr.write(`hotline: ${(err as Error).message}\n`);
    process.exitCode = err instanceof RequestFailed ? 1 : 3;
  },
);
