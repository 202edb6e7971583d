import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createServer } from "node:http";
import { connect, HotlineError, type HotlineClient } from "../../client/index.js";
import { newDirs, TestDaemon, useDaemon } from "../helpers/daemon.js";

/** Connects to a test daemon the way a local program would: through its directories. */
function connectTo(daemon: TestDaemon): Promise<HotlineClient> {
  return connect({ stateDir: daemon.dirs.state, configDir: daemon.dirs.config });
}

async function rejection(promise: Promise<unknown>): Promise<HotlineError> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(HotlineError);
  return error as HotlineError;
}

describe("client requests", () => {
  const ctx = useDaemon();

  it("finds the local daemon through its directories and gets typed results", async () => {
    const client = await connectTo(ctx.daemon);
    try {
      const info = await client.request("state.info");
      expect(info.actions.map((a) => a.name)).toContain("shell");
      const { status, output } = await client.shell("printf 'hi\\n'; exit 3", { wait: 30_000 });
      expect(status.state).toBe("failed");
      expect(status.exitCode).toBe(3);
      expect(output?.toString()).toBe("hi\n");
    } finally {
      await client.close();
    }
  });

  it("connects with {url, token} and with {url, tokenFile}", async () => {
    for (const options of [
      { url: ctx.daemon.url, token: ctx.daemon.token },
      { url: ctx.daemon.url, tokenFile: join(ctx.daemon.dirs.config, "token") },
    ]) {
      const client = await connect(options);
      try {
        expect((await client.request("jobs.list", { limit: 1 })).jobs).toBeInstanceOf(Array);
      } finally {
        await client.close();
      }
    }
  });

  it("rejects an error reply with a HotlineError carrying code, message, path and details", async () => {
    const client = await connectTo(ctx.daemon);
    try {
      const invalid = await rejection(client.request("shell", { command: "true", timeoutMs: -1 }));
      expect(invalid.code).toBe("invalid_request");
      expect(invalid.path).toBe("/timeoutMs");
      expect(invalid.message).toContain("/timeoutMs");
      const unknown = await rejection((client.request as (a: string, p: object) => Promise<unknown>)("jobs.lst", {}));
      expect(unknown.code).toBe("unknown_action");
      expect(unknown.details).toEqual(expect.objectContaining({ suggestion: "jobs.list" }));
      const missing = await rejection(client.job("j0000000000000").status());
      expect(missing.code).toBe("not_found");
    } finally {
      await client.close();
    }
  });

  it("fails with unavailable when the server never answers the upgrade", async () => {
    const silent = createServer(() => {}); // accepts TCP, never speaks
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const url = `ws://127.0.0.1:${(silent.address() as { port: number }).port}`;
      const error = await rejection(connect({ url, token: "t", connectTimeoutMs: 200 }));
      expect(error.code).toBe("unavailable");
      expect(error.message).toContain(url);
      expect(error.message).toContain("timed out");
    } finally {
      silent.closeAllConnections?.();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it("refuses a wrong token with unauthorized", async () => {
    const error = await rejection(connect({ url: ctx.daemon.url, token: "wrong" }));
    expect(error.code).toBe("unauthorized");
    expect(error.message).toContain("HTTP 401");
  });

  it("waits, cancels and reads a job's whole output in pages", async () => {
    const client = await connectTo(ctx.daemon);
    try {
      // 6 MiB: more than one 4 MiB page of jobs.output.
      const { job } = await client.shell("head -c 6291456 /dev/zero | tr '\\0' 'x'");
      const status = await job.wait();
      expect(status.state).toBe("succeeded");
      const output = await job.output();
      expect(output.length).toBe(6291456);
      expect(output.every((b) => b === 0x78)).toBe(true);
      const sleeper = await client.shell("sleep 60");
      expect((await sleeper.job.wait({ timeoutMs: 50 })).state).toBe("running");
      await sleeper.job.cancel({ graceMs: 100 });
      expect((await sleeper.job.wait()).state).toBe("cancelled");
    } finally {
      await client.close();
    }
  });
});

describe("discovery", () => {
  it("reports a daemon.json whose pid is gone as unavailable, naming the file", async () => {
    const daemon = await TestDaemon.start();
    try {
      await daemon.kill(); // SIGKILL leaves daemon.json behind, as a crash does
      const error = await rejection(connectTo(daemon));
      expect(error.code).toBe("unavailable");
      expect(error.message).toContain(join(daemon.dirs.state, "daemon.json"));
      expect(error.message).toContain("is gone");
      expect(error.message).not.toContain("ECONNREFUSED");
    } finally {
      daemon.cleanup();
    }
  });

  it("reports a missing daemon.json and a missing token file", async () => {
    const dirs = newDirs();
    const missing = await rejection(connect({ stateDir: dirs.state, configDir: dirs.config }));
    expect(missing.code).toBe("unavailable");
    expect(missing.message).toContain(join(dirs.state, "daemon.json"));
    mkdirSync(dirs.state, { recursive: true });
    writeFileSync(join(dirs.state, "daemon.json"), JSON.stringify({ pid: process.pid, url: "ws://127.0.0.1:1" }));
    const noToken = await rejection(connect({ stateDir: dirs.state, configDir: dirs.config }));
    expect(noToken.code).toBe("unauthorized");
    expect(noToken.message).toContain(join(dirs.config, "token"));
  });

  it("names the daemon.json when its (live) pid does not answer at the url", async () => {
    const dirs = newDirs();
    mkdirSync(dirs.state, { recursive: true });
    mkdirSync(dirs.config, { recursive: true });
    const port = spawnSync(
      process.execPath,
      ["-e", "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"],
      { encoding: "utf8" },
    );
    writeFileSync(join(dirs.state, "daemon.json"), JSON.stringify({ pid: process.pid, url: `ws://127.0.0.1:${port.stdout.trim()}` }));
    writeFileSync(join(dirs.config, "token"), "t\n");
    const error = await rejection(connect({ stateDir: dirs.state, configDir: dirs.config }));
    expect(error.code).toBe("unavailable");
    expect(error.message).toContain(join(dirs.state, "daemon.json"));
  });
});

describe("several daemons in one process", () => {
  it("keeps each client on its own daemon, and close() leaves no socket or timer behind", async () => {
    const daemons = await Promise.all([TestDaemon.start(), TestDaemon.start()]);
    try {
      const before = process
        .getActiveResourcesInfo()
        .filter((r) => r !== "TTYWrap")
        .sort();
      const clients = await Promise.all(daemons.map(connectTo));
      const jobs = await Promise.all(clients.map((c, i) => c.shell(`printf 'daemon ${i}'`, { wait: 30_000 })));
      expect(jobs.map((j) => j.output?.toString())).toEqual(["daemon 0", "daemon 1"]);
      // Each daemon knows only its own job.
      for (const [i, client] of clients.entries()) {
        const other = jobs[1 - i]!.status.id;
        if (other !== jobs[i]!.status.id) expect((await rejection(client.job(other).status())).code).toBe("not_found");
      }
      // A follow in flight and a wait in flight are released by close() too.
      const sleeper = await clients[0]!.shell("sleep 30");
      const follow = sleeper.job.follow();
      const first = follow.next();
      const waiting = sleeper.job.wait().catch((err: unknown) => err);
      expect(process.getActiveResourcesInfo().filter((r) => r === "TCPSocketWrap").length).toBeGreaterThanOrEqual(3);
      await Promise.all(clients.map((c) => c.close()));
      expect(await first).toEqual({ value: undefined, done: true });
      expect(await waiting).toBeInstanceOf(HotlineError);
      const after = process
        .getActiveResourcesInfo()
        .filter((r) => r !== "TTYWrap")
        .sort();
      expect(after).toEqual(before);
    } finally {
      for (const d of daemons) {
        await d.stop();
        d.cleanup();
      }
    }
  });
});
