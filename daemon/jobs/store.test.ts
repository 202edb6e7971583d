import { afterEach, describe, expect, it } from "vitest";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { JobStore } from "./store.js";
import type { JobRecord } from "./job.js";

const silent = pino({ level: "silent" });
const dirs: string[] = [];

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "hotline-store-"));
  dirs.push(dir);
  return dir;
}

function record(id: string, state: JobRecord["state"] = "succeeded"): JobRecord {
  return { id, kind: "shell", title: id, state, createdAt: "2026-11-30T00:00:00.000Z", outputBytes: 0 };
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("JobStore", () => {
  it("replays the journal, newest line of a job winning, and forgets evicted jobs", () => {
    const dir = freshDir();
    const store = new JobStore(dir, silent, []);
    store.loadAll();
    store.save(record("j000001", "running"));
    store.save(record("j000001", "failed"));
    store.save(record("j000002"));
    store.remove("j000002");
    const loaded = new JobStore(dir, silent, []).loadAll();
    expect(loaded.map((r) => [r.id, r.state])).toEqual([["j000001", "failed"]]);
  });

  it("skips a line torn by a crash, and the next record starts on a line of its own", () => {
    const dir = freshDir();
    const first = new JobStore(dir, silent, []);
    first.loadAll();
    first.save(record("j000001"));
    appendFileSync(join(dir, "journal.jsonl"), '{"id":"j000002","kind":"sh'); // the crash
    const second = new JobStore(dir, silent, []);
    expect(second.loadAll().map((r) => r.id)).toEqual(["j000001"]);
    second.save(record("j000003"));
    expect(
      new JobStore(dir, silent, [])
        .loadAll()
        .map((r) => r.id)
        .sort(),
    ).toEqual(["j000001", "j000003"]);
  });

  it("compacts a long journal into snapshot.json and loads the same records from it", () => {
    const dir = freshDir();
    const store = new JobStore(dir, silent, []);
    store.loadAll();
    for (let i = 0; i < 2500; i++) store.save(record(`j${String(i % 10).padStart(6, "0")}`, i % 2 ? "failed" : "succeeded"));
    expect(existsSync(join(dir, "snapshot.json"))).toBe(true);
    expect(readFileSync(join(dir, "journal.jsonl"), "utf8").split("\n").length).toBeLessThan(2500);
    const loaded = new JobStore(dir, silent, []).loadAll();
    expect(loaded).toHaveLength(10);
    // The last of the 2500 saves (i = 2499: odd, failed) is the newest for its job.
    expect(loaded.find((r) => r.id === "j000009")?.state).toBe("failed");
  });
});
