import { describe, expect, it } from "vitest";
import { TestDaemon } from "./helpers/daemon.js";

describe("no callback exception ends the daemon", () => {
  it("keeps serving when a stalled follower's job is evicted under it (a throw from a drain callback)", async () => {
    const daemon = await TestDaemon.start({ args: ["--retain-jobs", "1", "--output-cap", String(256 * 1024 * 1024)] });
    try {
      const control = await daemon.client();
      const { job } = await control.ok("shell", { command: "head -c 67108864 /dev/zero", wait: 60_000 });
      const viewer = await daemon.client();
      // Stop reading: the daemon's writes back up and the follower waits for a drain.
      const socket = (viewer.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
      socket.pause();
      viewer.sendRaw(JSON.stringify({ id: 1, action: "jobs.follow", job: job.id, binary: true }));
      // Two newer finished jobs evict the followed one (retain 1) and delete its output.
      await control.ok("shell", { command: "true", wait: 10_000 });
      await control.ok("shell", { command: "true", wait: 10_000 });
      expect((await control.call("jobs.status", { job: job.id })).error.code).toBe("not_found");
      // Whatever ends the follower — its connection failing alone (1011), a logged uncaught throw,
      // a proper end event, or the daemon dying — happens once the drain callback reads the deleted log.
      const settled = Promise.race([
        new Promise((resolve) => viewer.ws.once("close", resolve)),
        new Promise((resolve) =>
          daemon.proc.stderr!.on("data", (chunk: Buffer) => chunk.toString().includes("uncaught") && resolve("logged")),
        ),
        viewer.waitFor((f) => f.event === "job.exit" || f.event === "job.error", 60_000, "end of the evicted follow"),
        new Promise((resolve) => daemon.proc.once("exit", resolve)),
      ]);
      socket.resume(); // the drain callback now reads a deleted log
      await settled;
      // Another round trip on a fresh connection proves the daemon outlived the drain callback.
      const later = await daemon.client();
      expect((await later.ok("state.info")).name).toBe("hotline");
      expect(daemon.proc.exitCode).toBeNull();
      await Promise.all([later.close(), viewer.close(), control.close()]);
    } finally {
      await daemon.stop();
      daemon.cleanup();
    }
  }, 90_000);
});
