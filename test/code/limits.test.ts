import { describe, expect, it } from "vitest";
import type { Frame } from "../helpers/daemon.js";
import { useDaemon } from "../helpers/daemon.js";
import { gone, pythonUsable, resultText, run } from "./helpers.js";

const MiB = 1024 * 1024;

describe.skipIf(!pythonUsable())("code contexts under their budget, and hostile code", () => {
  const t = useDaemon();
  const budget = async () => (await t.client.ok("code.context.list")).budget;

  it("holds 50 contexts at once within the memory budget, refuses past the count with what to do, and frees them on remove", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 50; i += 5) {
      const batch = await Promise.all(Array.from({ length: 5 }, () => t.client.ok("code.context.create", { language: "python" })));
      ids.push(...batch.map((r) => r.context.id));
    }
    const fifty = await budget();
    expect(fifty.open).toBe(50);
    expect(fifty.memoryBytes).toBeLessThanOrEqual(fifty.maxMemoryBytes);
    // Each one answers, and only for itself.
    const answers = await Promise.all(ids.slice(0, 10).map((context, i) => run(t.client, `n = ${i}\nn * 2`, { context })));
    expect(answers.map(resultText)).toEqual(Array.from({ length: 10 }, (_, i) => String(i * 2)));

    let refusal: Frame | undefined;
    for (let i = 50; i < 200 && !refusal; i++) {
      const reply = await t.client.call("code.context.create", { language: "python" });
      if (reply.ok) ids.push(reply.result.context.id);
      else refusal = reply.error;
    }
    expect(refusal).toMatchObject({ code: "limit_exceeded", details: { limit: fifty.maxContexts } });
    expect(refusal!.message).toMatch(/at most \d+ code contexts/);
    expect(refusal!.message).toContain("code.context.remove");
    expect(ids.length).toBe(fifty.maxContexts);
    const full = await budget();
    expect(full.memoryBytes).toBeLessThanOrEqual(full.maxMemoryBytes);
    // A default context is refused the same way, in the run's reply.
    expect((await t.client.call("code.run", { code: "1", language: "python" })).error).toMatchObject({ code: "limit_exceeded" });

    const { contexts } = await t.client.ok("code.context.list");
    const pids = contexts.map((c: Frame) => c.pid as number);
    expect(pids.every((pid: number) => pid > 0)).toBe(true);
    for (let i = 0; i < ids.length; i += 8)
      await Promise.all(ids.slice(i, i + 8).map((context) => t.client.ok("code.context.remove", { context })));
    await gone(pids);
    expect(await budget()).toMatchObject({ open: 0 });
  });

  it("refuses a new context while the open ones hold the memory budget, and accepts it once freed", async () => {
    const { context } = await t.client.ok("code.context.create", { language: "python" });
    const { memoryBytes, maxMemoryBytes } = await budget();
    const fill = maxMemoryBytes - memoryBytes + 32 * MiB;
    const filled = await run(t.client, `big = b"\\x01" * ${fill}\nlen(big)`, { context: context.id });
    expect(resultText(filled)).toBe(String(fill));
    const refused = (await t.client.call("code.context.create", { language: "python" })).error;
    expect(refused).toMatchObject({ code: "limit_exceeded", details: { limitBytes: maxMemoryBytes } });
    expect(refused.message).toMatch(/hold \d+ MiB, and at most \d+ MiB may be held/);
    await run(t.client, "del big", { context: context.id });
    const again = await t.client.ok("code.context.create", { language: "python" });
    await t.client.ok("code.context.remove", { context: again.context.id });
    await t.client.ok("code.context.remove", { context: context.id });
  });

  it("bounds a run's result: thousands of displays and large values are counted or kept as files, never held inline", async () => {
    const many = await run(t.client, "for i in range(2000):\n    display(i)");
    expect(many.result.outputs.length).toBe(500);
    expect(many.result.outputs.at(-1).data).toEqual({ "text/plain": "499" });
    expect(many.result.omitted).toEqual([{ mime: "*", bytes: expect.any(Number), why: "1500 more outputs past the first 500 of the run" }]);
    const wide = await run(
      t.client,
      "for i in range(40):\n    display({'text/html': '<p>' + 'x' * 30000 + '</p>', 'text/plain': 'p'}, raw=True)",
    );
    const inline = JSON.stringify(wide.result).length;
    expect(inline).toBeLessThan(128 * 1024);
    const kept = wide.result.outputs.filter((o: Frame) => o.files?.["text/html"]);
    expect(kept.length).toBeGreaterThan(30);
    const status = await t.client.ok("jobs.status", { job: wide.job.id });
    expect(JSON.stringify(status.result).length).toBe(inline);
    const tagged = await run(t.client, "for i in range(60):\n    display(i, metadata={'text/plain': {'note': 'm' * 100000}})");
    expect(tagged.result.outputs).toHaveLength(60);
    expect(JSON.stringify(tagged.result).length).toBeLessThan(128 * 1024);
    expect(tagged.result.omitted.filter((o: Frame) => o.mime === "metadata").length).toBeGreaterThan(50);
  });

  it("kills an interpreter that breaks its channel (a line past the bound on fd 4) and tells the next run", async () => {
    const { context } = await t.client.ok("code.context.create", { language: "python" });
    await run(t.client, "kept = 1", { context: context.id });
    const broken = await run(t.client, "import os\nos.write(4, b'x' * (3 << 20))", { context: context.id });
    expect(broken.result).toMatchObject({ status: "error", error: { name: "InterpreterExited" } });
    expect(broken.result.error.value).toMatch(/protocol error/);
    const next = await run(t.client, "'kept' in globals()", { context: context.id });
    expect(next.result).toMatchObject({ status: "ok", contextRestarted: true, lost: ["kept"] });
    expect(resultText(next)).toBe("False");
    await t.client.ok("code.context.remove", { context: context.id });
  });

  it("restarts an interpreter that exits under a run (os._exit) at once, and says so", async () => {
    const { context } = await t.client.ok("code.context.create", { language: "python" });
    await run(t.client, "kept = 1", { context: context.id });
    const exited = await run(t.client, "import os\nos._exit(3)", { context: context.id });
    expect(exited.result).toMatchObject({
      status: "error",
      contextRestarted: true,
      generation: 2,
      lost: ["kept"],
      error: { name: "InterpreterExited" },
    });
    expect(exited.result.error.value).toContain("exit code 3");
    const next = await run(t.client, "1 + 1", { context: context.id });
    expect(next.result).toMatchObject({ status: "ok", generation: 2 });
    expect(next.result.contextRestarted).toBeUndefined();
    await t.client.ok("code.context.remove", { context: context.id });
  });
});
