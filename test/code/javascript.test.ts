import { describe, expect, it } from "vitest";
import type { Frame } from "../helpers/daemon.js";
import { useDaemon } from "../helpers/daemon.js";
import { resultText, run } from "./helpers.js";

describe("JavaScript code contexts over the real daemon", () => {
  const t = useDaemon();
  const js = { language: "javascript" };

  it("keeps let bindings from run to run: let a = 1, then a + 1 is 2, in the daemon's own node", async () => {
    const first = await run(t.client, "let a = 1", js);
    expect(first.result).toMatchObject({ status: "ok", outputs: [], executionCount: 1, language: "javascript", generation: 1 });
    const second = await run(t.client, "console.log('adding'); a + 1", js);
    expect(resultText(second)).toBe("2");
    expect(second.output).toMatchObject({ data: "adding\n" });
    const { contexts } = await t.client.ok("code.context.list");
    const context = contexts.find((c: Frame) => c.default && c.language === "javascript");
    expect(context).toMatchObject({ id: first.result.context, interpreter: process.execPath, names: expect.arrayContaining(["a"]) });
  });

  it("awaits at the top level, and gives objects as JSON", async () => {
    const reply = await run(
      t.client,
      "const got = await new Promise((resolve) => setTimeout(() => resolve(6 * 7), 20));\n({ got, list: [a, 2] })",
      js,
    );
    expect(reply.result.outputs).toEqual([
      { type: "result", data: { "application/json": { got: 42, list: [1, 2] }, "text/plain": "{ got: 42, list: [ 1, 2 ] }" } },
    ]);
  });

  it("reports an exception with its stack, naming the user's cell and line", async () => {
    const reply = await run(t.client, "function far() {\n  throw new RangeError('too far');\n}\nfar()", js);
    expect(reply.result).toMatchObject({ status: "error", error: { name: "RangeError", value: "too far" } });
    const stack = reply.result.error.traceback.join("\n");
    expect(stack).toMatch(/RangeError: too far\n\s+at far \(<cell \d+>:2:9\)/);
    expect(stack).not.toMatch(/js_driver|node:internal/);
    expect(resultText(await run(t.client, "a", js))).toBe("1");
  });

  it("interrupts a synchronous loop on timeout and keeps the context; kills one it cannot break (after an await) and says so", async () => {
    const looped = await run(t.client, "while (true) {}", { ...js, timeoutMs: 1000 });
    expect(looped.result).toMatchObject({ status: "timed_out", generation: 1 });
    expect(looped.result.contextRestarted).toBeUndefined();
    expect(resultText(await run(t.client, "a", js))).toBe("1");

    const stuck = await run(t.client, "await null;\nwhile (true) {}", { ...js, timeoutMs: 1000 });
    expect(stuck.job.state).toBe("timed_out");
    expect(stuck.result).toMatchObject({ status: "timed_out", contextRestarted: true, generation: 2 });
    expect(stuck.result.lost).toEqual(expect.arrayContaining(["a", "far"]));
    const after = await run(t.client, "typeof a", js);
    expect(after.result).toMatchObject({ status: "ok", generation: 2, executionCount: 1 });
    expect(resultText(after)).toBe("'undefined'");
  });
});
