import { describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { DAEMON_MAIN, DAEMON_NODE_FLAGS, TestDaemon, daemonEnv } from "./helpers/daemon.js";
import { runDaemonToExit } from "./helpers/run-to-exit.js";

/** The abstract socket names a process holds, as anyone on the machine can see them in /proc/net/unix. */
function abstractNamesOf(pid: number): string[] {
  const inodes = new Set(
    readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
      try {
        return [/^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1] ?? ""];
      } catch {
        return [];
      }
    }),
  );
  return readFileSync("/proc/net/unix", "utf8")
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter((f) => f[7]?.startsWith("@hotline-") && inodes.has(f[6]!))
    .map((f) => `\0${f[7]!.slice(1).replace(/@+$/, "")}`); // node pads abstract names with NULs, shown as @
}

/** What another user can do with a name it saw: bind it, and answer every asker with a lie (or nothing). */
function squat(name: string, answer: string | undefined): Promise<Server> {
  const server = createServer((socket) => {
    socket.on("error", () => {});
    if (answer !== undefined) socket.end(answer);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ path: name }, () => resolve(server));
  });
}

describe("one daemon per state directory", { timeout: 120_000 }, () => {
  it("refuses a second daemon before it touches the first one's jobs or daemon.json", async () => {
    const first = await TestDaemon.start();
    try {
      const client = await first.client();
      const { job } = await client.ok("shell", { command: "sleep 300" });
      const daemonFile = join(first.dirs.state, "daemon.json");
      const before = readFileSync(daemonFile, "utf8");

      const second = await runDaemonToExit(["--port", "0"], daemonEnv(first.dirs));
      expect(second.code).toBe(3);
      expect(second.stderr).toContain(`hotline is already running (pid ${first.proc.pid}, ${first.url}`);
      expect(second.stderr.trim().split("\n")).toHaveLength(1); // no log lines: it never started

      expect((await client.ok("jobs.status", { job: job.id })).state).toBe("running");
      expect(readFileSync(daemonFile, "utf8")).toBe(before);
      await client.ok("jobs.cancel", { job: job.id });
      await client.close();
    } finally {
      await first.stop();
      first.cleanup();
    }
  });

  it("refuses a second daemon having loaded only its entry: the config and the lock, not the daemon's wiring and libraries", async () => {
    const first = await TestDaemon.start();
    try {
      const record = join(first.dirs.root, "modules.txt");
      const hook = new URL("./fixtures/modules/record.mjs", import.meta.url).href;
      const args = [...DAEMON_NODE_FLAGS, "--import", hook, DAEMON_MAIN, "--port", "0"];
      const env = { ...daemonEnv(first.dirs), HOTLINE_RECORD_MODULES: record };
      const code = await new Promise<number | null>((resolve) =>
        spawn(process.execPath, args, { env, stdio: "ignore" }).once("exit", resolve),
      );
      expect(code).toBe(3);
      const loaded = readFileSync(record, "utf8")
        .split("\n")
        .filter((url) => url.startsWith("file:"));
      // The bundle (dist/bundle) names each chunk a dynamic import starts after the imported file:
      // main-<hash>.js is daemon/main.ts with everything it imports.
      expect(
        loaded.some((url) => url.includes("/dist/bundle/daemon.js")),
        loaded.join("\n"),
      ).toBe(true);
      expect(loaded.filter((url) => /\/dist\/bundle\/main-[A-Z0-9]+\.js$/.test(url) || url.includes("/node_modules/"))).toEqual([]);
      expect(existsSync(join(first.dirs.state, "daemon.json"))).toBe(true);
    } finally {
      await first.stop();
      first.cleanup();
    }
  });

  it("takes over a state directory whose daemon was killed (the kernel freed the lock)", async () => {
    const first = await TestDaemon.start();
    await first.kill();
    const second = await TestDaemon.start({ dirs: first.dirs });
    try {
      const client = await second.client();
      expect((await client.ok("state.info")).name).toBe("hotline");
      await client.close();
    } finally {
      await second.stop();
      second.cleanup();
    }
  });

  for (const [what, answer] of [
    ["lies about who holds it", `${JSON.stringify({ pid: 1, url: "ws://evil.example:7070" })}\n`],
    ["never answers", undefined],
  ] as const) {
    it(`starts although another process bound its lock's name and ${what}, and prints none of it`, async () => {
      const first = await TestDaemon.start();
      const [name] = abstractNamesOf(first.proc.pid!);
      expect(name).toBeDefined();
      await first.stop();
      const squatter = await squat(name!, answer);
      try {
        const second = await TestDaemon.start({ dirs: first.dirs });
        try {
          expect(second.logLines.join("\n")).not.toContain("evil.example");
          expect(second.logLines.some((l) => l.includes("could not prove it is this state directory's daemon"))).toBe(true);
          // The lock still works, under its new name: a third daemon is refused, naming the real holder.
          const third = await runDaemonToExit(["--port", "0"], daemonEnv(first.dirs));
          expect(third.code).toBe(3);
          expect(third.stderr).toContain(`hotline is already running (pid ${second.proc.pid}, ${second.url}`);
          expect(third.stderr).not.toContain("evil.example");
        } finally {
          await second.stop();
        }
      } finally {
        squatter.close();
        first.cleanup();
      }
    });
  }
});
