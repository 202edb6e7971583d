import { spawn } from "node:child_process";
import { DAEMON_MAIN, DAEMON_NODE_FLAGS } from "./daemon.js";

/** Runs a daemon that is expected to refuse to start (at most 20 s) and returns its exit code and stderr. */
export function runDaemonToExit(args: string[], env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [...DAEMON_NODE_FLAGS, DAEMON_MAIN, ...args], { env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    proc.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    // A daemon that does not refuse would run forever: kill it after a generous bound, so no test leaves one behind.
    const bound = setTimeout(() => proc.kill("SIGKILL"), 20_000);
    proc.once("exit", (code) => {
      clearTimeout(bound);
      resolve({ code, stderr });
    });
  });
}
