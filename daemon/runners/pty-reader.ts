import { readFile, readlink } from "node:fs/promises";

/**
 * System calls a program blocks in while it waits for terminal input: read(2) on the terminal, or
 * the poll/select family (readline, REPLs, editors). Numbers per architecture (unistd.h).
 */
const WAITING_SYSCALLS: Record<string, { read: number[]; poll: number[] }> = {
  x64: { read: [0, 19], poll: [7, 23, 232, 270, 271, 281, 441] },
  arm64: { read: [63, 65], poll: [22, 72, 73, 441] },
};

/**
 * How often the probe looks: every 10 ms at first, less often the longer the program goes without
 * reading (a terminal's stdin string may wait minutes), up to every 250 ms. And how long output
 * must have been quiet where the kernel hides the syscall.
 */
const POLL_MS = 10;
const MAX_POLL_MS = 250;
const QUIET_MS = 150;

/** A terminal session's processes looked at, at most: a shell, the program it runs and its helpers. */
const MAX_PROCESSES = 64;

/** Process group (field 5 of /proc/PID/stat) and the terminal's foreground group (field 8). */
async function groups(pid: number): Promise<{ pgrp: number; tpgid: number } | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
  if (!stat) return undefined;
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { pgrp: Number(fields[2]), tpgid: Number(fields[5]) };
}

/** The session leader and its descendants, breadth first, from /proc/PID/task/PID/children. */
async function sessionProcesses(leader: number): Promise<number[]> {
  const found = [leader];
  for (let i = 0; i < found.length && found.length < MAX_PROCESSES; i++) {
    const pid = found[i]!;
    const children = await readFile(`/proc/${pid}/task/${pid}/children`, "utf8").catch(() => "");
    for (const child of children.split(" ")) if (/^\d+$/.test(child)) found.push(Number(child));
  }
  return found.slice(0, MAX_PROCESSES);
}

/**
 * Whether a process of the terminal's foreground group waits for input; undefined when the kernel
 * does not say for any of them.
 */
async function foregroundWaits(leader: number, ttyPath: string): Promise<boolean | undefined> {
  const tpgid = (await groups(leader))?.tpgid;
  if (tpgid === undefined || tpgid <= 0) return undefined;
  let unknown = false;
  for (const pid of await sessionProcesses(leader)) {
    if ((await groups(pid))?.pgrp !== tpgid) continue;
    const waits = await waitsForInput(pid, ttyPath);
    if (waits === true) return true;
    if (waits === undefined) unknown = true;
  }
  return unknown ? undefined : false;
}

/**
 * Whether `pid` is blocked waiting for input from `ttyPath`; undefined when the kernel does not say
 * (no /proc/PID/syscall, or not permitted), so the caller falls back to a quiet period.
 */
async function waitsForInput(pid: number, ttyPath: string): Promise<boolean | undefined> {
  const calls = WAITING_SYSCALLS[process.arch];
  if (!calls) return undefined;
  let line: string;
  try {
    line = (await readFile(`/proc/${pid}/syscall`, "utf8")).trim();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === "ENOENT" || code === "ESRCH" ? false : undefined;
  }
  const [nr, arg0] = line.split(" ");
  if (nr === undefined || !/^\d+$/.test(nr)) return false; // "running", or a process in between
  const number = Number(nr);
  if (calls.poll.includes(number)) return true;
  if (!calls.read.includes(number) || arg0 === undefined) return false;
  const target = await readlink(`/proc/${pid}/fd/${Number.parseInt(arg0, 16)}`).catch(() => "");
  return target === ttyPath;
}

/**
 * Resolves once the terminal's foreground program is waiting for input, so a Ctrl-D written next
 * is read as end-of-input by the program in the mode it reads in. A Ctrl-D queued in line mode
 * before a program switches the terminal to raw mode (python's readline at start-up) reaches it as
 * a NUL and is lost; waiting for the read avoids that. Where the kernel hides what the program
 * does, output quiet for QUIET_MS stands in; either way it gives up waiting at `deadline`.
 */
export async function untilReading(
  leader: number,
  ttyPath: string | undefined,
  lastOutputAt: () => number,
  deadline: number,
): Promise<void> {
  const started = Date.now();
  while (Date.now() < deadline) {
    const waiting = ttyPath === undefined ? undefined : await foregroundWaits(leader, ttyPath);
    if (waiting === true) return;
    if (waiting === undefined && Date.now() - lastOutputAt() >= QUIET_MS) return;
    // 10 ms for the first second, then a tenth of the time waited so far.
    const pause = Math.min(MAX_POLL_MS, Math.max(POLL_MS, (Date.now() - started) / 10));
    await new Promise((resolve) => setTimeout(resolve, Math.min(pause, Math.max(0, deadline - Date.now()))));
  }
}
