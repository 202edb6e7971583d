import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useDaemon } from "./helpers/daemon.js";

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("a process job's live processes", () => {
  const t = useDaemon();

  it("jobs.status lists them, a setsid stray included, and shows none once a cancel has stopped them", async () => {
    const marker = join(t.daemon.dirs.root, "stray-term");
    // The stray leaves the job's group and session; it notes when SIGTERM reaches it.
    const command = `setsid bash -c 'trap "date +%s%3N > ${marker}; exit 0" TERM; sleep 301 & wait' & sleep 300 & echo started; wait`;
    const started = await t.client.ok("shell", { command });
    const id = started.job.id as string;
    const running = await until("three processes", async () => {
      const status = await t.client.ok("jobs.status", { job: id });
      return status.processes?.list.some((p: { command: string }) => p.command === "sleep 301") ? status : undefined;
    });
    expect(running.processes.count).toBeGreaterThanOrEqual(4); // bash, sleep 300, the setsid bash, sleep 301
    expect(running.processes.list.map((p: { command: string }) => p.command)).toEqual(expect.arrayContaining(["sleep 300", "sleep 301"]));
    expect(running.processes.list.every((p: { pid: number }) => p.pid > 0)).toBe(true);

    const cancelAt = Date.now();
    const job = await t.client.ok("jobs.cancel", { job: id, wait: 10_000 });
    expect(job.state).toBe("cancelled");
    await until("the stray's SIGTERM", async () => (existsSync(marker) && readFileSync(marker, "utf8").trim() ? true : undefined));
    const strayTermAt = Number(readFileSync(marker, "utf8"));
    // The guide promises strays are found within about 0.1 s of the main process's end (they were
    // found a second after it); the bound leaves room for a loaded machine.
    expect(strayTermAt - cancelAt).toBeLessThan(1000);
    const after = await until("no live processes", async () => {
      const status = await t.client.ok("jobs.status", { job: id });
      return status.processes.count === 0 ? status : undefined;
    });
    expect(after.processes).toEqual({ count: 0, list: [] });
  });

  it("names no processes for a job that runs none (a download)", async () => {
    const { job } = await t.client.ok("files.download", {
      url: "http://127.0.0.1:1/nothing",
      dest: join(t.daemon.dirs.root, "x"),
      wait: 10_000,
    });
    const status = await t.client.ok("jobs.status", { job: job.id });
    expect(status.processes).toBeUndefined();
  });
});
