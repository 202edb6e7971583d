import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { TestDaemon } from "./helpers/daemon.js";

/**
 * GET /healthz and /readyz: for an orchestrator's probes and the image's HEALTHCHECK. No token, any
 * Host (a kubelet probes the pod's IP), and nothing in the answer but `ok` or `not ready`.
 */

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

function get(url: string, path: string, options: { method?: string; host?: string } = {}): Promise<Answer> {
  const { hostname, port } = new URL(url.replace(/^ws/, "http"));
  return new Promise((resolve, reject) => {
    const req = request(
      { hostname, port, path, method: options.method ?? "GET", headers: options.host ? { Host: options.host } : {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8"), headers: res.headers }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/** Polls /readyz until it answers `status` (a verdict may be one probe old); the answer. */
async function readyzUntil(url: string, status: number): Promise<Answer> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const answer = await get(url, "/readyz");
    if (answer.status === status) return answer;
    if (Date.now() > deadline) throw new Error(`/readyz still answers ${answer.status} ${JSON.stringify(answer.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Makes a directory refuse writes, even to root (CI runs as root, which ignores mode bits): the
 * immutable attribute where the file system has it, else mode 0500 for anyone else. The undo.
 */
function refuseWrites(dir: string): () => void {
  if (process.getuid?.() === 0) {
    const set = spawnSync("chattr", ["+i", dir], { encoding: "utf8" });
    if (set.status === 0) return () => void spawnSync("chattr", ["-i", dir]);
    // No chattr here: the probe's own file made a directory fails its write just the same.
    mkdirSync(join(dir, ".readyz-blocked"));
    rmSync(join(dir, ".readyz"), { force: true });
    mkdirSync(join(dir, ".readyz"));
    return () => {
      rmSync(join(dir, ".readyz"), { recursive: true, force: true });
      rmSync(join(dir, ".readyz-blocked"), { recursive: true, force: true });
    };
  }
  spawnSync("chmod", ["0500", dir]);
  return () => void spawnSync("chmod", ["0700", dir]);
}

/** The failing checks of the daemon's first `not ready` log record that names `check`, once it has logged one. */
async function loggedFailing(daemon: TestDaemon, check: string): Promise<string[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const record = daemon.logLines
      .map((l) => JSON.parse(l) as { msg: string; failing?: string[] })
      .find((r) => r.msg === "not ready" && r.failing?.some((f) => f.startsWith(`${check}: `)));
    if (record?.failing) return record.failing;
    if (Date.now() > deadline) throw new Error(`no "not ready" record in the log:\n${daemon.logLines.join("\n")}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function start(args: string[] = []): Promise<TestDaemon> {
  // No desktop configured (DISPLAY empty): readiness here is the state directory, the token and SSH.
  const daemon = await TestDaemon.start({ args, env: { DISPLAY: "" } });
  onTestFinished(async () => {
    await daemon.stop();
    daemon.cleanup();
  });
  return daemon;
}

describe("health endpoints", () => {
  it("answer without a token under any Host with `ok` and nothing else; other methods get 405", async () => {
    const daemon = await start();
    for (const host of [undefined, "10.244.1.7:7070", "attacker.example"]) {
      const live = await get(daemon.url, "/healthz", { host });
      expect(live).toMatchObject({ status: 200, body: "ok\n" });
      expect(live.headers["cache-control"]).toBe("no-store");
      expect(live.headers.server).toBeUndefined();
      const ready = await readyzUntil(daemon.url, 200);
      expect(ready.body).toBe("ok\n");
    }
    expect((await get(daemon.url, "/healthz", { method: "HEAD" })).status).toBe(200);
    const post = await get(daemon.url, "/readyz", { method: "POST" });
    expect(post).toMatchObject({ status: 405, body: "GET or HEAD\n" });
    expect(post.headers.allow).toBe("GET, HEAD");
  });

  it("readiness goes false while the state directory refuses writes, says only `not ready`, logs which check failed, and comes back", async () => {
    const daemon = await start();
    await readyzUntil(daemon.url, 200);
    const undo = refuseWrites(daemon.dirs.state);
    onTestFinished(undo);
    const refused = await readyzUntil(daemon.url, 503);
    expect(refused.body).toBe("not ready\n");
    expect((await get(daemon.url, "/healthz")).status).toBe(200); // alive all the same
    expect(await loggedFailing(daemon, "state directory")).toEqual([expect.stringMatching(/^state directory: .*(EACCES|EPERM|EISDIR)/)]);
    undo();
    await readyzUntil(daemon.url, 200);
  });

  it("readiness waits for the SSH server when SSH is on, and does not ask for it when off", async () => {
    const off = await start(["--ssh", "off"]);
    await readyzUntil(off.url, 200);
    expect(off.logLines.some((l) => l.includes('"ssh:'))).toBe(false);
    // SSH on with its port taken: the daemon runs, ssh.open says why, and readiness stays false.
    const on = await start();
    await readyzUntil(on.url, 200); // the SSH server starts after the WebSocket listener: its port is known once ready
    const info = (await (await on.client()).ok("state.info")) as { ssh: { port: number } };
    const blocked = await start(["--ssh-port", String(info.ssh.port)]);
    const refused = await readyzUntil(blocked.url, 503);
    expect(refused.body).toBe("not ready\n");
    expect(await loggedFailing(blocked, "ssh")).toEqual([expect.stringMatching(/^ssh: /)]);
  });

  it("readiness asks for the desktop's X server when a display is configured", async () => {
    const daemon = await start(["--ssh", "off", "--display", ":97"]);
    const refused = await readyzUntil(daemon.url, 503);
    expect(refused.body).toBe("not ready\n");
    expect(await loggedFailing(daemon, "desktop")).toEqual([expect.stringMatching(/^desktop: \/tmp\/\.X11-unix\/X97: /)]);
  });
});
