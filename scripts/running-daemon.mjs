// Finds a daemon that runs this checkout's dist/, so a build never replaces the files under it
// (it still imports modules lazily — the terminal runner, the extractors — and reads dist/guide).
import { readdirSync, readFileSync, readlinkSync, realpathSync } from "node:fs";
import { join, resolve } from "node:path";

function real(path) {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * The first process whose command line runs <root>/dist/daemon/main.js, or <root>/dist/cli/main.js
 * with the `daemon` verb: `{pid, command}`, or undefined. Linux only (reads /proc); elsewhere undefined.
 */
export function runningDaemonOf(root) {
  const daemonMain = real(join(root, "dist/daemon/main.js"));
  const cliMain = real(join(root, "dist/cli/main.js"));
  let pids;
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid);
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    let argv;
    let cwd;
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
      cwd = readlinkSync(`/proc/${pid}/cwd`);
    } catch {
      continue; // gone, or not ours to read
    }
    const paths = argv.map((arg) => (arg.endsWith(".js") || arg.includes("hotline") ? real(resolve(cwd, arg)) : arg));
    const daemon = paths.includes(daemonMain) || (paths.includes(cliMain) && argv.includes("daemon"));
    if (daemon) return { pid: Number(pid), command: argv.join(" ") };
  }
  return undefined;
}
