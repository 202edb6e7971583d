import { describe, expect, it } from "vitest";
import { useDaemon } from "./helpers/daemon.js";

describe("process jobs: titles", () => {
  const t = useDaemon();

  it("titles an argv job as a shell would need it typed", async () => {
    const loop = await t.client.ok("shell", { command: ["bash", "-c", "exit 0; while :; do sleep 1 & wait; done"], wait: 10_000 });
    expect(loop.job.title).toBe("bash -c 'exit 0; while :; do sleep 1 & wait; done'");
    const quoted = await t.client.ok("shell", { command: ["printf", "%s|", "it's", "", "plain/path.txt"], wait: 10_000 });
    expect(quoted.job.title).toBe(`printf '%s|' 'it'\\''s' '' plain/path.txt`);
    expect(quoted.output.data).toBe("it's||plain/path.txt|");
  });
});
