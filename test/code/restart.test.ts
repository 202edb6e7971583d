import { describe, expect, it } from "vitest";
import { TestDaemon } from "../helpers/daemon.js";
import { gone, pythonUsable, resultText, run } from "./helpers.js";

describe.skipIf(!pythonUsable())("code contexts across a daemon restart", () => {
  it("ends the interpreters with the daemon, and tells the next runs that their state is gone", async () => {
    const first = await TestDaemon.start();
    let pids: number[];
    let named: string;
    try {
      const client = await first.client();
      await run(client, "x = 41");
      named = (await client.ok("code.context.create", { language: "python" })).context.id;
      pids = (await client.ok("code.context.list")).contexts.map((c: { pid: number }) => c.pid);
      expect(pids).toHaveLength(2);
      await client.close();
    } finally {
      await first.stop();
    }
    await gone(pids);
    const second = await TestDaemon.start({ dirs: first.dirs });
    try {
      const client = await second.client();
      const next = await run(client, "'x' in globals()");
      expect(resultText(next)).toBe("False");
      expect(next.result).toMatchObject({ status: "ok", generation: 1, contextRestarted: true });
      expect(next.result.restartReason).toMatch(
        /^the daemon restarted: the default python context before it \(c\w+\) and its state are gone$/,
      );
      expect(next.result.lost).toBeUndefined(); // not known: the earlier daemon took them with it
      expect((await run(client, "1")).result.contextRestarted).toBeUndefined();
      const refused = (await client.call("code.run", { context: named, code: "1" })).error;
      expect(refused).toMatchObject({ code: "not_found", path: "/context" });
      expect(refused.message).toContain("was lost when the daemon stopped");
      await client.close();
    } finally {
      await second.stop();
      second.cleanup();
    }
  });
});
