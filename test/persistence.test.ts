import { describe, expect, it, onTestFinished, vi } from "vitest";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { TestDaemon, withDaemon } from "./helpers/daemon.js";

/** Pids of live `sleep 987.123` processes (the crash test's marker), "" when none. */
function sleepers(): string {
  return execFileSync("sh", ["-c", "pgrep -f 'slee[p] 987.123' || true"], { encoding: "utf8" }).trim();
}

describe("persistence across restarts", () => {
  it("keeps finished jobs and their output after a crash, and marks the running one lost", async () => {
    const first = await TestDaemon.start();
    onTestFinished(async () => void (await first.stop())); // a failed assertion must not leave it running
    const client = await first.client();
    const done = await client.ok("shell", { command: "echo kept; echo also >&2", wait: 10_000 });
    const { job: running } = await client.ok("shell", { command: "echo before-crash; exec sleep 987.123" });
    expect(running.pid).toBeGreaterThan(0);
    await client.ok("jobs.follow", { job: running.id });
    await client.waitFor((f) => f.event === "job.output" && f.job === running.id);
    // What a follower has seen is on disk already (output nobody follows may wait 5 ms in a stage).
    const segment = join(first.dirs.state, "jobs", running.id, `seg-${"0".padStart(15, "0")}.log`);
    expect(readFileSync(segment, "utf8")).toBe("before-crash\n");
    // The process group is in the journal before the reply that shows it.
    const journal = join(first.dirs.state, "jobs", "journal.jsonl");
    expect(readFileSync(journal, "utf8")).toMatch(new RegExp(`"id":"${running.id}"[^\n]*"pid":${running.pid}`));
    // ...in the job's one start record, written after the spawn: no journal write delays the spawn.
    const startLines = readFileSync(journal, "utf8")
      .split("\n")
      .filter((line) => line.includes(`"id":"${running.id}"`));
    expect(startLines).toHaveLength(1);
    await first.kill();
    expect(sleepers()).not.toBe(""); // the crash left the job's process running

    await withDaemon({ dirs: first.dirs }, async (_second, c2) => {
      const status = await c2.ok("jobs.status", { job: done.job.id });
      expect(status).toMatchObject({ state: "succeeded", exitCode: 0, outputBytes: 10 });
      expect((await c2.ok("jobs.output", { job: done.job.id, stream: "stderr" })).data).toBe("also\n");
      expect((await c2.ok("jobs.output", { job: done.job.id })).data).toBe("kept\nalso\n");
      const lost = await c2.ok("jobs.status", { job: running.id });
      expect(lost.state).toBe("lost");
      expect(lost.pid).toBeUndefined();
      expect(sleepers()).toBe(""); // ...and the next daemon stopped exactly that process group
      expect(lost.error.message).toMatch(/daemon stopped/);
      expect((await c2.ok("jobs.output", { job: running.id })).data).toBe("before-crash\n");
    });
  });

  it("writes daemon.json while running and removes it on a clean shutdown, stopping live jobs as lost", async () => {
    const daemon = await TestDaemon.start();
    const file = join(daemon.dirs.state, "daemon.json");
    const client = await daemon.client();
    const { job } = await client.ok("shell", { command: "exec sleep 986.5" });
    const info = JSON.parse(execFileSync("cat", [file], { encoding: "utf8" }));
    expect(info).toMatchObject({ pid: daemon.proc.pid, url: daemon.url });
    expect(await daemon.stop()).toBe(0);
    expect(existsSync(file)).toBe(false);
    expect(execFileSync("sh", ["-c", "pgrep -f 'slee[p] 986.5' || true"], { encoding: "utf8" }).trim()).toBe("");

    await withDaemon({ dirs: daemon.dirs }, async (_again, c2) => {
      const status = await c2.ok("jobs.status", { job: job.id });
      expect(status.state).toBe("lost");
      expect(status.error.message).toMatch(/shut down/);
    });
  });

  it("keeps head and tail of a job past its output cap and counts what it omitted", async () => {
    await withDaemon({ args: ["--output-cap", "65536"] }, async (daemon, client) => {
      const total = 1024 * 1024;
      const result = await client.ok("shell", { command: `seq 1 300000 | head -c ${total}`, wait: 20_000 });
      const expected = execFileSync("bash", ["-c", `seq 1 300000 | head -c ${total}`]);
      expect(result.job.outputBytes).toBe(total);
      expect(result.job.omittedBytes).toBeGreaterThanOrEqual(total - 65536);
      const head = await client.ok("jobs.output", { job: result.job.id, from: 0, limit: 1000 });
      expect(head.data).toBe(expected.subarray(0, 1000).toString());
      const middle = await client.ok("jobs.output", { job: result.job.id, from: total / 2, limit: 100 });
      expect(middle.from).toBeGreaterThan(total / 2);
      expect(middle.data).toBe(expected.subarray(middle.from, middle.from + 100).toString());
      let pos = middle.from;
      let last = middle;
      while (!last.eof) {
        last = await client.ok("jobs.output", { job: result.job.id, from: pos });
        pos = last.next;
      }
      expect(pos).toBe(total);
      expect(last.data.endsWith(expected.subarray(total - 50).toString())).toBe(true);
      const kept = execFileSync("du", ["-sb", join(daemon.dirs.state, "jobs", result.job.id)], { encoding: "utf8" });
      expect(Number(kept.split("\t")[0])).toBeLessThanOrEqual(65536 + 16384);
    });
  });

  it("keeps only the newest N finished jobs", async () => {
    await withDaemon({ args: ["--retain-jobs", "5"] }, async (daemon, client) => {
      const ids: string[] = [];
      for (let i = 0; i < 8; i++) ids.push((await client.ok("shell", { command: `echo ${i}`, wait: 10_000 })).job.id);
      const list = await client.ok("jobs.list", { limit: 100 });
      expect(list.jobs.map((j: { id: string }) => j.id)).toEqual(ids.slice(3).reverse());
      expect((await client.call("jobs.status", { job: ids[0] })).error.code).toBe("not_found");
      // The directory of an evicted job is deleted in the background.
      await vi.waitFor(() => expect(existsSync(join(daemon.dirs.state, "jobs", ids[0]!))).toBe(false), { timeout: 10_000, interval: 20 });
    });
  });

  it("kill -9 amid a storm of tokens.create and tokens.revoke: every create answered holds after the restart, every revoke answered stays revoked", async () => {
    const first = await TestDaemon.start();
    onTestFinished(async () => void (await first.stop()));
    const client = await first.client();
    const create = () => client.ok("tokens.create", { scope: "observe", ttlMs: 600_000, label: "l".repeat(200) });
    const standing = await Promise.all(Array.from({ length: 300 }, create));
    const created: string[] = [];
    const revoked: string[] = [];
    const storm = standing
      .slice(0, 200)
      .flatMap((t) =>
        [
          create().then((made) => void created.push(made.id as string)),
          client.ok("tokens.revoke", { tokenId: t.id }).then(() => void revoked.push(t.id as string)),
        ].map((p) => p.catch(() => undefined)),
      );
    // Killed once part of the storm is answered: writes of the rest are in flight or waiting.
    await vi.waitFor(() => expect(created.length + revoked.length).toBeGreaterThan(100), { timeout: 30_000, interval: 1 });
    const answered = { created: [...created], revoked: [...revoked] };
    await first.kill();
    await client.close();
    await Promise.all(storm);
    const file = join(first.dirs.config, "tokens.json");
    const kept = new Set((JSON.parse(readFileSync(file, "utf8")) as Array<{ id: string }>).map((t) => t.id)); // whole, old or new
    expect(answered.created.filter((id) => !kept.has(id))).toEqual([]);
    expect(answered.revoked.filter((id) => kept.has(id))).toEqual([]);
    await withDaemon({ dirs: first.dirs }, async (_again, c2) => {
      const listed = new Set(((await c2.ok("tokens.list")).tokens as Array<{ id: string }>).map((t) => t.id));
      expect(answered.created.every((id) => listed.has(id))).toBe(true);
      expect(answered.revoked.some((id) => listed.has(id))).toBe(false);
    });
    console.log(
      `tokens: killed after ${answered.created.length} creates and ${answered.revoked.length} revokes were answered; the file kept ${kept.size}`,
    );
  });
});
