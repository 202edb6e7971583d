import { describe, expect, it } from "vitest";
import { TestDaemon } from "./helpers/daemon.js";

describe("shutdown with a broken log pipe", () => {
  it("exits promptly on SIGTERM when the reader of its stderr has gone", async () => {
    const daemon = await TestDaemon.start();
    try {
      const client = await daemon.client();
      // Close our end of the daemon's stderr: every later log write there fails with EPIPE.
      daemon.proc.stderr!.destroy();
      // Something to log after the pipe broke, so the writer has met EPIPE before shutdown.
      await client.ok("shell", { command: "true", wait: 10_000 });
      await client.close();
      const exited = new Promise<number | null>((resolve) => daemon.proc.once("exit", (code) => resolve(code)));
      daemon.proc.kill("SIGTERM");
      // Before the fix it never exits; "promptly" is a generous 10 s on a loaded machine.
      const hung = new Promise<string>((resolve) => setTimeout(() => resolve("still running 10 s after SIGTERM"), 10_000).unref());
      expect(await Promise.race([exited, hung])).toBe(0);
    } finally {
      if (daemon.proc.exitCode === null) daemon.proc.kill("SIGKILL");
      daemon.cleanup();
    }
  }, 20_000);
});
