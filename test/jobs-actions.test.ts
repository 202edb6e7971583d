import { describe, expect, it } from "vitest";
import { useDaemon } from "./helpers/daemon.js";

describe("jobs actions", () => {
  const t = useDaemon();

  it("jobs.cancel with wait returns the final status of a job that ends within it", async () => {
    // The trap keeps the job alive a moment after SIGTERM, so without wait the reply would still say running.
    const { job } = await t.client.ok("shell", { command: "trap 'sleep 0.3; exit 3' TERM; echo ready; while :; do sleep 0.05; done" });
    const viewer = await t.daemon.client();
    await viewer.ok("jobs.follow", { job: job.id });
    await viewer.waitFor((f) => f.event === "job.output" && f.job === job.id);
    const status = await t.client.ok("jobs.cancel", { job: job.id, wait: 10_000 });
    expect(status.state).toBe("cancelled");
    expect(status.endedAt).toBeDefined();
    await viewer.close();
  });

  it("jobs.output tail starts at a line start", async () => {
    const { job } = await t.client.ok("shell", { command: "for i in 1 2 3 4 5; do echo line$i; done", wait: 10_000 });
    expect(await t.client.ok("jobs.output", { job: job.id, tail: 12 })).toMatchObject({
      data: "line4\nline5\n",
      from: 18,
      next: 30,
      eof: true,
    });
    // Ten bytes from the end is inside line4: the read moves forward to the next line start.
    expect((await t.client.ok("jobs.output", { job: job.id, tail: 10 })).data).toBe("line5\n");
    expect((await t.client.ok("jobs.output", { job: job.id, tail: 1000 })).data).toBe("line1\nline2\nline3\nline4\nline5\n");
  });

  it("jobs.output tail with stream counts only that stream's bytes", async () => {
    const { job } = await t.client.ok("shell", {
      command: "echo out1; echo err1 >&2; echo out2; echo err2 >&2; echo out3; echo err3 >&2; echo out4",
      wait: 10_000,
    });
    const reply = await t.client.ok("jobs.output", { job: job.id, tail: 10, stream: "stderr" });
    expect(reply.data).toBe("err2\nerr3\n");
    const all = await t.client.ok("jobs.output", { job: job.id });
    expect(reply.from).toBe(Buffer.from(all.data).indexOf("err2"));
  });

  it("jobs.output tail without a line break in reach returns exactly the last bytes", async () => {
    const { job } = await t.client.ok("shell", { command: "printf abcdefghij", wait: 10_000 });
    expect((await t.client.ok("jobs.output", { job: job.id, tail: 4 })).data).toBe("ghij");
    const both = await t.client.call("jobs.output", { job: job.id, tail: 4, from: 0 });
    expect(both.error).toMatchObject({ code: "invalid_request", path: "/tail" });
  });

  it("a malformed job id is not_found, naming the id pattern", async () => {
    for (const action of ["jobs.status", "jobs.output", "jobs.cancel"]) {
      const reply = await t.client.call(action, { job: "../nope" });
      expect(reply.error).toMatchObject({ code: "not_found", path: "/job" });
      expect(reply.error.message).toContain("^j[0-9a-z]{6,40}$");
      expect(reply.error.message).toContain('"../nope"');
    }
    // Not a string at all is still a malformed request.
    expect((await t.client.call("jobs.status", { job: 5 })).error).toMatchObject({ code: "invalid_request", path: "/job" });
  });
});
