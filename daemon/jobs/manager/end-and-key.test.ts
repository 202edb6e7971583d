import { describe, expect, it } from "vitest";
import { Job } from "../job.js";
import { endOf } from "./outcome.js";
import { keyedJob, newRecord } from "./start.js";
import { JobTable } from "./table.js";
import type { StartJobOptions } from "./types.js";

const options = (key?: string, params: unknown = { a: 1 }): StartJobOptions => ({
  kind: "shell",
  title: "t",
  key,
  params,
  run: async () => ({ ok: true }),
});

function job(id = "j1", key?: string): Job {
  const opts = options(key);
  return new Job(newRecord(id, opts, keyedJob(new JobTable(1), opts).paramsHash), "/nonexistent");
}

describe("a job's end", () => {
  it("follows the outcome, unless the job was stopped: the first reason wins, a shutdown makes it lost", () => {
    expect(endOf(job(), { ok: true, exitCode: 0 }).state).toBe("succeeded");
    expect(endOf(job(), { ok: false, exitCode: 2 })).toMatchObject({ state: "failed", fields: { exitCode: 2, pid: undefined } });
    const stopped = job();
    stopped.requestStop("timed_out");
    stopped.requestStop("cancelled");
    expect(endOf(stopped, { ok: false, signal: "SIGTERM" })).toMatchObject({ state: "timed_out", fields: { signal: "SIGTERM" } });
    const shut = job();
    shut.requestStop("shutdown");
    expect(endOf(shut, { ok: true })).toMatchObject({ state: "lost", fields: { error: { code: "unavailable" } } });
  });
});

describe("a start's key", () => {
  it("reuses the job of a key with equal parameters and refuses the key with other ones", () => {
    const table = new JobTable(5);
    const first = job("j1", "k");
    table.add(first);
    expect(keyedJob(table, options("k")).reused).toBe(first);
    expect(() => keyedJob(table, options("k", { a: 2 }))).toThrow(/key "k" was used for job j1 with other parameters/);
    expect(keyedJob(table, options()).paramsHash).toBeUndefined();
    table.delete(first);
    expect(keyedJob(table, options("k")).reused).toBeUndefined();
    expect(() => table.get("j1")).toThrow(/no job j1; .*the 5 that finished last/);
  });
});
