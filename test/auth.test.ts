import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { statSync } from "node:fs";
import { join } from "node:path";
import { TestClient, TestDaemon } from "./helpers/daemon.js";

describe("upgrade: token, origin, scopes", () => {
  let daemon: TestDaemon;

  beforeAll(async () => {
    daemon = await TestDaemon.start({ args: ["--allow-origin", "http://trusted.example"] });
  });
  afterAll(async () => {
    await daemon?.stop();
    daemon?.cleanup();
  });

  it("creates the token file with mode 0600", () => {
    expect(statSync(join(daemon.dirs.config, "token")).mode & 0o777).toBe(0o600);
  });

  it("refuses an upgrade without a token with 401", async () => {
    await expect(TestClient.connect(daemon.url, undefined)).rejects.toMatchObject({ status: 401 });
  });

  it("refuses a wrong token with 401 and a structured body", async () => {
    const err = (await TestClient.connect(daemon.url, "nope").catch((e: unknown) => e)) as { status: number; body: string };
    expect(err.status).toBe(401);
    expect(JSON.parse(err.body).error.code).toBe("unauthorized");
  });

  it("refuses a browser Origin with 403 even with the right token", async () => {
    const err = (await TestClient.connect(daemon.url, daemon.token, { origin: "http://localhost:3000" }).catch((e: unknown) => e)) as { status: number; body: string };
    expect(err.status).toBe(403);
    expect(JSON.parse(err.body).error.code).toBe("forbidden");
  });

  it("accepts an allow-listed Origin", async () => {
    const client = await TestClient.connect(daemon.url, daemon.token, { origin: "http://trusted.example" });
    expect((await client.ok("state.info")).name).toBe("hotline");
    await client.close();
  });

  it("never writes the token to the log", () => {
    expect(daemon.logLines.join("\n")).not.toContain(daemon.token);
  });

  it("lets an observe token read but not run, and refuses it once expired", async () => {
    const manage = await daemon.client();
    const { job } = await manage.ok("shell", { command: "echo visible", wait: 10_000 });
    const observe = await manage.ok("tokens.create", { scope: "observe" });
    const short = await manage.ok("tokens.create", { scope: "observe", ttlMs: 1000 });
    expect(observe.token).not.toBe(daemon.token);

    const viewer = await daemon.client({}, observe.token);
    expect((await viewer.ok("state.info")).scope).toBe("observe");
    expect((await viewer.ok("jobs.output", { job: job.id })).data).toBe("visible\n");
    const refused = await viewer.call("shell", { command: "true" });
    expect(refused.error.code).toBe("forbidden");
    const terminal = await viewer.call("shell", { command: "bash", pty: { cols: 80, rows: 24 } });
    expect(terminal.error.code).toBe("forbidden");
    const cancel = await viewer.call("jobs.cancel", { job: job.id });
    expect(cancel.error.code).toBe("forbidden");
    await viewer.close();

    // The short token expires: wait on the daemon's own clock via a job, not a sleep in the test.
    await manage.ok("shell", { command: "sleep 1.2", wait: 10_000 });
    await expect(TestClient.connect(daemon.url, short.token)).rejects.toMatchObject({ status: 401 });
    await manage.close();
  });
});
