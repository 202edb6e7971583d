import { describe, expect, it } from "vitest";
import { useDaemon } from "./helpers/daemon.js";

describe("protocol: bad input gets a structured error and the socket stays usable", () => {
  const t = useDaemon();

  async function stillUsable(): Promise<void> {
    const info = await t.client.ok("state.info");
    expect(info.name).toBe("hotline");
  }

  it("answers bad JSON with bad_json", async () => {
    const before = t.client.frames.length;
    t.client.sendRaw("{not json");
    const reply = await t.client.waitFor((f) => t.client.frames.indexOf(f) >= before && f.ok === false);
    expect(reply.error.code).toBe("bad_json");
    expect(reply.id).toBeUndefined();
    await stillUsable();
  });

  it("answers a non-object with bad_json", async () => {
    const before = t.client.frames.length;
    t.client.sendRaw("[1,2]");
    const reply = await t.client.waitFor((f) => t.client.frames.indexOf(f) >= before && f.ok === false);
    expect(reply.error.code).toBe("bad_json");
    await stillUsable();
  });

  it("answers an unknown action with the nearest valid name", async () => {
    const reply = await t.client.call("jobs.lst");
    expect(reply.ok).toBe(false);
    expect(reply.error.code).toBe("unknown_action");
    expect(reply.error.details.suggestion).toBe("jobs.list");
    expect(reply.error.path).toBe("/action");
    await stillUsable();
  });

  it("names the JSON path of a schema violation", async () => {
    const wrongType = await t.client.call("shell", { command: "true", timeoutMs: "soon" });
    expect(wrongType.error).toMatchObject({ code: "invalid_request", path: "/timeoutMs" });
    const nested = await t.client.call("shell", { command: ["echo", 5] });
    expect(nested.error).toMatchObject({ code: "invalid_request", path: "/command/1" });
    const missing = await t.client.call("jobs.status", {});
    expect(missing.error).toMatchObject({ code: "invalid_request", path: "/job" });
    const extra = await t.client.call("state.info", { verbose: true });
    expect(extra.error).toMatchObject({ code: "invalid_request", path: "/verbose" });
    const pty = await t.client.call("shell", { command: "true", pty: { cols: 0, rows: 10 } });
    expect(pty.error).toMatchObject({ code: "invalid_request", path: "/pty/cols" });
    await stillUsable();
  });

  it("echoes string and numeric ids, and answers many requests in flight", async () => {
    const frames = await Promise.all(Array.from({ length: 50 }, () => t.client.call("state.info")));
    expect(new Set(frames.map((f) => f.id)).size).toBe(50);
    const before = t.client.frames.length;
    t.client.sendRaw(JSON.stringify({ id: "abc", action: "jobs.list" }));
    const reply = await t.client.waitFor((f) => t.client.frames.indexOf(f) >= before && f.id === "abc");
    expect(reply.ok).toBe(true);
  });

  it("answers an oversize frame with limit_exceeded and keeps the socket", async () => {
    const big = JSON.stringify({ id: "big", action: "shell", command: "x".repeat(1024 * 1024 + 10) });
    const before = t.client.frames.length;
    t.client.sendRaw(big);
    const reply = await t.client.waitFor((f) => t.client.frames.indexOf(f) >= before && f.ok === false);
    expect(reply.error.code).toBe("limit_exceeded");
    await stillUsable();
  });

  it("echoes the id of an oversize frame wherever it sits at the top level (a 2 MB env value)", async () => {
    const value = "v".repeat(2_000_000);
    const first = await t.client.call("shell", { command: "true", env: { BIG: value } });
    expect(first.error.code).toBe("limit_exceeded");
    expect(first.error.message).toContain("maxPayloadBytes");
    // The id after the big value, behind a nested object holding quotes, braces and escapes.
    const tricky = JSON.stringify({ action: "shell", env: { A: 'x"}{,\\"id": 9', BIG: value }, command: ["a", "}"], id: "after" });
    t.client.sendRaw(tricky);
    const second = await t.client.waitFor((f) => f.id === "after", 10_000, "limit_exceeded reply with id after");
    expect(second.error.code).toBe("limit_exceeded");
    // No top-level id (only a nested one): the reply has none.
    const before = t.client.frames.length;
    t.client.sendRaw(JSON.stringify({ action: "shell", env: { id: "nested", BIG: value } }));
    const third = await t.client.waitFor((f) => t.client.frames.indexOf(f) >= before && f.ok === false, 10_000, "id-less limit_exceeded");
    expect(third.id).toBeUndefined();
    await stillUsable();
  });

  it("answers not_found for an unknown job", async () => {
    const reply = await t.client.call("jobs.status", { job: "j000000000000000000" });
    expect(reply.error).toMatchObject({ code: "not_found", path: "/job" });
  });
});
