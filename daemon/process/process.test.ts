import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { afterEach, beforeEach, describe, expect, it, onTestFinished, vi } from "vitest";
import {
  escalate,
  groupHasLiveMembers,
  isProcessStartedAt,
  isSameProcess,
  parseProcStat,
  processStartTicks,
  readProcStat,
  signalGroup,
  terminateGroup,
  waitGroupGone,
} from "./index.js";

const hasProc = readProcStat(process.pid) !== undefined;

/** Starts `script` in bash as the leader of its own group; resolves once it printed "ready". */
async function startGroup(script: string): Promise<{ child: ChildProcess; pid: number }> {
  const child = spawn("bash", ["-c", script], { detached: true, stdio: ["ignore", "pipe", "inherit"] });
  onTestFinished(() => void signalGroup(child.pid, "SIGKILL"));
  let seen = "";
  await new Promise<void>((resolve, reject) => {
    child.once("error", reject);
    child.stdout!.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes("ready")) resolve();
    });
  });
  return { child, pid: child.pid! };
}

describe("/proc/<pid>/stat parsing", () => {
  // Fields 3..22 after the name: state, ppid, pgrp, session, tty, tpgid, flags, 4 fault counts,
  // 4 times, priority, nice, threads, itrealvalue, starttime (22), then the rest.
  const line = (comm: string): string =>
    `4242 (${comm}) S 1 4240 4240 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 12345 67 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n`;

  it("reads the fields after the last parenthesis, whatever the command name holds", () => {
    for (const comm of ["bash", "a b c", "evil) S 1 2 3 (x", "((", "tmux: server (1)", ""]) {
      expect(parseProcStat(line(comm))).toEqual({ pid: 4242, comm, state: "S", pgid: 4240, startTicks: "987654" });
    }
  });

  it("refuses text that is not a stat line", () => {
    expect(parseProcStat("")).toBeUndefined();
    expect(parseProcStat("4242 (bash) S 1 4240")).toBeUndefined();
    expect(parseProcStat("no parentheses at all")).toBeUndefined();
  });

  it.skipIf(!hasProc)("reads this process's own stat", () => {
    const stat = readProcStat(process.pid)!;
    expect(stat.pid).toBe(process.pid);
    expect(stat.pgid).toBeGreaterThan(0);
    expect(processStartTicks(process.pid)).toBe(stat.startTicks);
  });
});

describe.skipIf(!hasProc)("process identity by pid and start time", () => {
  it("knows a live process by its start time and refuses the same pid with another one (a reused pid)", async () => {
    const startedAt = new Date().toISOString();
    const { pid } = await startGroup("echo ready; exec sleep 60");
    const ticks = processStartTicks(pid)!;
    expect(isSameProcess(pid, ticks)).toBe(true);
    expect(isSameProcess(pid, String(Number(ticks) + 1))).toBe(false);
    expect(isProcessStartedAt(pid, startedAt, 10_000)).toBe(true);
    // The record of a job that started an hour earlier names this pid: it is another process now.
    expect(isProcessStartedAt(pid, new Date(Date.now() - 3_600_000).toISOString())).toBe(false);
  });

  it("says no for a pid that is gone", async () => {
    const { child, pid } = await startGroup("echo ready; exec sleep 60");
    const ticks = processStartTicks(pid)!;
    child.kill("SIGKILL");
    await once(child, "exit");
    expect(processStartTicks(pid)).toBeNull();
    expect(isProcessStartedAt(pid, new Date().toISOString())).toBe(false);
    expect(isSameProcess(pid, ticks)).toBe(true); // nothing to compare with: the caller's liveness check decides
  });
});

describe.skipIf(!hasProc)("TERM → grace → KILL on a process group", () => {
  it("kills a group that ignores SIGTERM after the grace, and the wait resolves once the group is gone", async () => {
    // The leader and a background child both ignore TERM (an ignored signal stays ignored across exec).
    const { child, pid } = await startGroup("trap '' TERM; sleep 60 & echo ready; wait");
    const exited = once(child, "exit");
    expect(groupHasLiveMembers(pid)).toBe(true);
    const escalation = terminateGroup(pid, 1500);
    onTestFinished(() => escalation.cancel());
    // SIGTERM changed nothing: still alive well inside the grace.
    expect(await waitGroupGone(pid, 200)).toBe(false);
    expect(await waitGroupGone(pid, 20_000)).toBe(true);
    expect(groupHasLiveMembers(pid)).toBe(false);
    const [code, signal] = await exited;
    expect({ code, signal }).toEqual({ code: null, signal: "SIGKILL" });
  });
});

describe("escalate", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("sends the first signal now and SIGKILL after the grace, then runs onKill", () => {
    const sent: string[] = [];
    escalate((signal) => void sent.push(signal), 500, { first: "SIGINT", onKill: () => sent.push("onKill") });
    expect(sent).toEqual(["SIGINT"]);
    vi.advanceTimersByTime(499);
    expect(sent).toEqual(["SIGINT"]);
    vi.advanceTimersByTime(1);
    expect(sent).toEqual(["SIGINT", "SIGKILL", "onKill"]);
  });

  it("sends no SIGKILL once cancelled, nor after a target that was already gone", () => {
    const sent: string[] = [];
    escalate((signal) => void sent.push(signal), 500).cancel();
    escalate((signal) => {
      sent.push(`gone:${signal}`);
      return false;
    }, 500);
    vi.advanceTimersByTime(10_000);
    expect(sent).toEqual(["SIGTERM", "gone:SIGTERM"]);
  });
});
