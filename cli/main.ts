#!/usr/bin/env -S node --max-semi-space-size=1 --v8-pool-size=1
import { parseArgs } from "node:util";
import type { CommandContext } from "./commands.js";
import { DaemonGone, EXIT, NoDaemon } from "./exit-codes.js";

// Everything else is imported by the command that needs it: `hotline --help` loads this file and
// nothing more, a verb loads the client, the config rules and the verb table (README: Start-up).

const USAGE = `hotline — the in-sandbox agent daemon and its CLI

  hotline daemon [--port N] [--host H] …      start the daemon in the foreground (--help: all its flags)
  hotline state info|catalog                  what the daemon is / Nix inputs
  hotline state guide [SECTION|all]           the agent guide: its core, one section (e.g. jobs), or all
  hotline shell [--cwd D] [--pty] -- CMD…     run a command, stream its output, exit with its code
  hotline jobs [--state S] [--limit N] [--sort cpu|memory]   list jobs, newest first (or by CPU / peak memory)
  hotline top [cpu|memory] [--once]           running jobs by CPU or memory, refreshed every 2 s (q quits)
  hotline status JOB                          one job's status
  hotline tail [-f] [--from N] JOB            print a job's output (-f: follow until it ends)
  hotline cancel JOB                          cancel a job (its whole process group)
  hotline prepare [--workspace DIR] [--flake REF] [--update-lock] [PKG…]   a Nix environment for a workspace
  hotline env [DIR]                           the environment a job in DIR would get
  hotline cache list|prune [--older-than 7d] [--keep N]   prepared environments: list; drop unused ones
  hotline download URL|--github OWNER/NAME [--tag T] --asset GLOB [--dest P] [--sha256 H | --sha256-sums URL|ASSET] [--overwrite]
  hotline extract ARCHIVE DEST [--strip N] [--format F]   unpack into a new directory, refusing unsafe entries
  hotline run SCRIPT [--interpreter bash|sh|python3] [--cwd D] [-- ARGS…]   run a script as a job
  hotline token create --scope observe [--ttl 15m]   issue a token
  hotline repos add [REPO] [--origin U|--path D]  clone (or git init) a repository's shared clone
  hotline repos list|snapshot [REPO] [--ref R]|bundle [REPO]   list; tar.gz of a tree; git bundle
  hotline tasks create TASK [--repo R] [--base REF]   a worktree on branch task-TASK
  hotline tasks list|commit TASK -m MSG|merge TASK [--into B]|remove TASK [--force]
  hotline secrets write --repo R|--task T < NAME=VALUE lines   the root .env (never committed)
  hotline cat FILE…                           print files byte-exact (files.read)
  hotline put FILE < DATA [--if-match SHA|absent] [--mode 0644] [--parents]   write stdin atomically
  hotline ls [DIR] [--depth N] [--glob G] [--hidden] [--gitignore]   list a directory
  hotline grep PATTERN [DIR] [--regex] [--glob G] [--limit N]   search files (git grep)
  hotline terminal [--cwd D] [JOB]            a terminal job attached here (raw mode; Ctrl-] detaches, the job keeps running)
  hotline terminal --link [--cwd D] [JOB]     print a short-lived browser link to a terminal job instead
  hotline console                             print a short-lived browser link to the live job console
  hotline ssh-command [--ttl 15m]             print a short-lived ssh command (scp, sftp, editors: same credential)
  hotline ssh-config [--ttl 1h] [--name N]    print a ~/.ssh/config block for VS Code / JetBrains
  hotline ports                               the TCP ports listening in the sandbox (pid, job, command)
  hotline preview PORT [--ttl 15m]            print a short-lived link to the server on PORT (proxied by the daemon)
  hotline screenshot -o FILE [--max-width N] [--max-height N] [--format png|jpeg] [--quality Q]   a screenshot of the desktop
  hotline desktop                             print a short-lived browser link to the desktop (noVNC)
  hotline session open [--cwd D] [--input-wait 3s] [--idle 30m] [--resume S]   a persistent bash session: prints its id
  hotline session run S [--timeout T] -- CMD…   run a command in it (cd, variables carry), exit with its code
  hotline session status S|list|close S       a session's state, cwd and background processes; end it
  hotline code run [--context C] [-l python|javascript] [--timeout 5m] [-o DIR] FILE|-   run code in a stateful context; figures saved to DIR
  hotline code list|restart C|remove C        the code contexts
  hotline send '<json>'                       send one raw action, print the reply
  hotline schema [ACTION|NAME]                the published JSON Schemas: index, an action's request/params/result
  hotline mcp [--url U --token-file F]         an MCP server on stdio for a coding agent (README: MCP)
Common flags: --json (machine output: JSON, or JSON lines of events for shell and tail -f),
  --state-dir, --config-dir, --url ws://HOST:PORT and --token-file F (a daemon daemon.json does not name)
Exit codes: a command that follows a job exits with the job's code (124 timed out, 130 cancelled);
  1 the daemon refused the request, 2 bad command line, 3 other CLI error,
  69 no daemon at the URL, or it stopped or died while the command waited`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === "help" || command === "--help" || command === "-h") {
    process.stdout.write(`${USAGE}\n`);
    return command ? 0 : EXIT.usage;
  }
  if (command === "daemon" && (rest.includes("--help") || rest.includes("-h"))) {
    process.stdout.write((await import("./daemon-help.js")).daemonHelp());
    return 0;
  }
  if (command === "daemon") {
    // Refused (another daemon holds the state directory) or failed: it exits with its own code.
    (await import("../daemon/entry.js")).runDaemonCommand(rest);
    return -1; // keeps running
  }
  // Like any program, `hotline mcp` connects through hotline/client itself: no CLI connection.
  if (command === "mcp") return (await import("./commands/mcp.js")).runMcp(rest);
  const [{ COMMANDS }, { CliClient }, { loadConfig }] = await Promise.all([
    import("./commands.js"),
    import("./client.js"),
    import("../daemon/config.js"),
  ]);
  const run = COMMANDS[command];
  if (!run) {
    process.stderr.write(`hotline: unknown command ${command}\n${USAGE}\n`);
    return EXIT.usage;
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
      sort: { type: "string" },
      scope: { type: "string" },
      ttl: { type: "string" },
      name: { type: "string" },
      workspace: { type: "string" },
      flake: { type: "string" },
      sha256: { type: "string" },
      "sha256-sums": { type: "string" },
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
      link: { type: "boolean" },
      "token-file": { type: "string" },
      origin: { type: "string" },
      "update-lock": { type: "boolean" },
      path: { type: "string" },
      ref: { type: "string" },
      repo: { type: "string" },
      task: { type: "string" },
      base: { type: "string" },
      into: { type: "string" },
      message: { type: "string", short: "m" },
      force: { type: "boolean" },
      "older-than": { type: "string" },
      keep: { type: "string" },
      "if-match": { type: "string" },
      mode: { type: "string" },
      parents: { type: "boolean" },
      depth: { type: "string" },
      glob: { type: "string" },
      hidden: { type: "boolean" },
      gitignore: { type: "boolean" },
      regex: { type: "boolean" },
      output: { type: "string", short: "o" },
      "max-width": { type: "string" },
      "max-height": { type: "string" },
      quality: { type: "string" },
      "input-wait": { type: "string" },
      idle: { type: "string" },
      resume: { type: "string" },
      context: { type: "string" },
      language: { type: "string", short: "l" },
    },
    allowPositionals: true,
    strict: false,
  });
  const flags: Record<string, string | undefined> = {};
  if (typeof values["state-dir"] === "string") flags["state-dir"] = values["state-dir"];
  if (typeof values["config-dir"] === "string") flags["config-dir"] = values["config-dir"];
  const config = loadConfig(flags);
  const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
  // Nothing is opened yet: the first request connects, so verbs that need no daemon run without one.
  const client = new CliClient({
    stateDir: config.stateDir,
    configDir: config.configDir,
    url: str(values.url),
    tokenFile: str(values["token-file"]),
  });
  const ctx: CommandContext = { client, args: positionals, flags: values, json: values.json === true, tty: process.stdout.isTTY === true };
  try {
    return await run(ctx);
  } finally {
    await client.close();
  }
}

/** Prints a failure the way the CLI words it and sets its exit code. */
async function fail(err: unknown): Promise<void> {
  const [{ HotlineError }, { cliErrorText }, { displayText }] = await Promise.all([
    import("../client/errors.js"),
    import("./flag-names.js"),
    import("./display.js"),
  ]);
  // A HotlineError that reaches here is the daemon's reply: CliClient turns unreachable daemons into NoDaemon.
  const text = err instanceof HotlineError ? cliErrorText(err) : (err as Error).message;
  process.stderr.write(`hotline: ${displayText(text)}\n`);
  process.exitCode =
    err instanceof HotlineError
      ? EXIT.requestFailed
      : err instanceof DaemonGone || err instanceof NoDaemon
        ? EXIT.daemonUnavailable
        : EXIT.other;
}

main(process.argv.slice(2)).then((code) => {
  if (code >= 0) process.exitCode = code;
}, fail);
