import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DRIVER_RC } from "../daemon/sessions/driver.js";
import { type BenchRow, median, pairRow, row, samplePairs, startBenchDaemon } from "./common.js";

/** A bare bash fed command lines on a pipe, each followed by a hand-written end marker: the floor of a session's round trip. */
function bareBash(): { proc: ChildProcess; run(command: string): Promise<void> } {
  const proc = spawn("bash", ["--noprofile", "--norc"], { stdio: ["pipe", "pipe", "inherit"] });
  let pending: (() => void) | undefined;
  let seen = "";
  proc.stdout!.on("data", (chunk: Buffer) => {
    seen += chunk.toString();
    if (!seen.endsWith("__END__\n")) return;
    seen = "";
    pending?.();
  });
  return {
    proc,
    run: (command) =>
      new Promise<void>((resolve) => {
        pending = resolve;
        proc.stdin!.write(`${command}; echo __END__\n`);
      }),
  };
}

/**
 * The session driver alone, driven from this process as the daemon drives it (text on fd 3, the
 * control line on fd 0, the done record on fd 4, then two turns for its output): what the bash side
 * of a session costs over a bare bash, without the daemon's request and job.
 */
async function driverAlone(): Promise<{ proc: ChildProcess; run(command: string): Promise<void>; stop(): void }> {
  const dir = mkdtempSync(join(tmpdir(), "hotline-bench-driver-"));
  const proc = spawn("bash", ["--noprofile", "--rcfile", DRIVER_RC, "--noediting", "-i"], {
    stdio: ["pipe", "pipe", "pipe", "pipe", "pipe"],
    env: { ...process.env, __HL_DIR: dir },
  });
  let fields = 0;
  let done: (() => void) | undefined;
  (proc.stdio[4] as NodeJS.ReadableStream).on("data", (chunk: Buffer) => {
    for (const byte of chunk)
      if (byte === 0 && ++fields === 4) {
        fields = 0;
        done?.();
      }
  });
  await new Promise<void>((resolve) => (done = resolve));
  const fifo = openSync(join(dir, "stdin"), "r+"); // held open, as the daemon holds it
  let seq = 0;
  return {
    proc,
    run: (command) =>
      new Promise<void>((resolve) => {
        done = () => setImmediate(() => setImmediate(resolve));
        const text = Buffer.from(command);
        (proc.stdio[3] as NodeJS.WritableStream).write(text);
        proc.stdin!.write(
          `__hl_read ${++seq} ${text.length} A; builtin eval "$__hl_cmd" <"$__hl_fifo" 2>&"$__hl_err" {__hl_out}>&- {__hl_in}<&- {__hl_err}>&-\n`,
        );
      }),
    stop: () => {
      proc.kill("SIGKILL");
      void fifo;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function residentBytes(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024;
}

/** `npm run bench sessions`: a session command's round trip against a bare bash, and what an idle session costs. */
export async function sessionsBenchmarks(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const daemon = await startBenchDaemon();
  const bash = bareBash();
  try {
    const { session } = await daemon.client.request("session.open", { cwd: "/tmp" });
    rows.push(
      pairRow(
        "session.run `true` with wait, round trip (client library) vs a bare bash fed `true; echo __END__` on a pipe",
        await samplePairs(
          1000,
          100,
          () => daemon.client.request("session.run", { session: session.id, command: "true", wait: 10_000 }),
          () => bash.run("true"),
        ),
        "≤ 1.5×",
        (r) => r <= 1.5,
      ),
    );
    // Where the time goes: any request's round trip (the daemon's floor), and the bash side alone.
    rows.push(
      pairRow(
        "session.run `true` with wait vs state.info, both round trips through the client library (no goal: what a command costs over any request)",
        await samplePairs(
          500,
          50,
          () => daemon.client.request("session.run", { session: session.id, command: "true", wait: 10_000 }),
          () => daemon.client.request("state.info"),
        ),
        "reported",
        () => undefined,
      ),
    );
    const driver = await driverAlone();
    try {
      rows.push(
        pairRow(
          "the session driver alone (driver.bash driven from this process, no daemon) vs the bare bash (no goal: the bash side's share)",
          await samplePairs(
            1000,
            100,
            () => driver.run("true"),
            () => bash.run("true"),
          ),
          "reported",
          () => undefined,
        ),
      );
    } finally {
      driver.stop();
    }
    await daemon.client.request("session.close", { session: session.id });

    // Memory: the shells of 16 idle sessions (each ran one command) against bare idle bashes, and
    // what the daemon itself grew by per session.
    const count = 16;
    const before = daemon.rssBytes();
    const shells: number[] = [];
    for (let i = 0; i < count; i++) {
      const { session: s } = await daemon.client.request("session.open", { cwd: "/tmp" });
      await daemon.client.request("session.run", { session: s.id, command: "true", wait: 10_000 });
      shells.push(s.pid!);
    }
    const grown = (daemon.rssBytes() - before) / count;
    const bare = Array.from({ length: count }, () => bareBash());
    await Promise.all(bare.map((b) => b.run("true")));
    const mib = (n: number): number => n / 1048576;
    const sessionShell = median(shells.map(residentBytes));
    const bareShell = median(bare.map((b) => residentBytes(b.proc.pid!)));
    for (const b of bare) b.proc.kill();
    rows.push(
      row(
        "memory of an idle session's shell (RSS, median of 16) vs an idle bare bash",
        mib(sessionShell),
        mib(bareShell),
        "MiB",
        "reported",
        () => true,
      ),
    );
    rows.push(
      row(
        "the daemon's RSS growth per idle session (16 opened) vs an idle session's shell",
        mib(grown),
        mib(sessionShell),
        "MiB",
        "reported",
        () => true,
      ),
    );
    return rows;
  } finally {
    bash.proc.kill();
    await daemon.stop();
  }
}
