import { mkdirSync } from "node:fs";
import { parseArgs } from "node:util";
import { loadConfig, SETTINGS } from "./config.js";
import { ALREADY_RUNNING_EXIT_CODE, alreadyRunningMessage, InstanceLock } from "./server/instance-lock.js";
import { probeNix } from "./system.js";

/**
 * The daemon's command-line entry: what must happen before anything heavy is loaded. A second
 * daemon on a held state directory is refused here, having loaded only the config and the lock
 * (it used to load and compile everything first: seconds of CPU to say no). The wiring
 * (main.ts, with every action, the server and the libraries) is imported only once the lock is ours.
 */

/** Parses daemon flags (`--port 0`, `--allow-origin X` …) from the SETTINGS table. */
export function parseDaemonFlags(argv: string[]): Record<string, string | string[] | undefined> {
  const options: Record<string, { type: "string"; multiple?: boolean }> = {};
  for (const s of SETTINGS) options[s.flag] = s.kind === "list" ? { type: "string", multiple: true } : { type: "string" };
  return parseArgs({ args: argv, options, allowPositionals: false, strict: true }).values as Record<string, string | string[] | undefined>;
}

/** A second daemon on a state directory another one holds: refused before it touches anything. */
export class AlreadyRunningError extends Error {
  readonly exitCode = ALREADY_RUNNING_EXIT_CODE;
}

/** Config → state directory → instance lock; then main.ts is loaded and runs the daemon. */
export async function runDaemon(argv: string[]): Promise<void> {
  const config = loadConfig(parseDaemonFlags(argv));
  mkdirSync(config.stateDir, { recursive: true, mode: 0o700 });
  // Nothing else is touched (no token, no crash recovery, no daemon.json) until the lock is ours.
  const locked = await InstanceLock.acquire(config.stateDir);
  if (!locked.ok) throw new AlreadyRunningError(alreadyRunningMessage(locked.holder, config.stateDir));
  const nix = probeNix();
  const { startDaemon } = await import("./main.js");
  await startDaemon({ config, locked, nix });
}

/** `hotline daemon …` and `node dist/daemon/main.js …`: runs the daemon; a refusal or failure ends the process with its exit code. */
export function runDaemonCommand(argv: string[]): void {
  runDaemon(argv).catch((err: unknown) => {
    if (err instanceof AlreadyRunningError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(err.exitCode);
    }
    process.stderr.write(`hotline: ${(err as Error).message}\n`);
    process.exit(1);
  });
}
