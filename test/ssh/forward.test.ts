import { createServer, type Server } from "node:http";
import { type AddressInfo, createServer as createTcpServer, connect } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { toolAvailable } from "../helpers/tools.js";
import { useDaemon } from "../helpers/daemon.js";
import { SshClients, pasted, type SshAccessForTest } from "../helpers/ssh.js";

const haveSsh = toolAvailable("ssh", ["-V"]);

/** A free loopback port (bound and released), for ssh -L / -D to listen on. */
async function freePort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Resolves once something accepts connections on 127.0.0.1:port (the client's forward is up). */
async function listening(port: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, "127.0.0.1", () => {
        s.destroy();
        resolve(true);
      });
      s.once("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(!haveSsh)("SSH: forwarding with the real OpenSSH client", () => {
  const ctx = useDaemon();
  const clients = new SshClients();
  let http: Server;
  let httpPort = 0;
  beforeAll(async () => {
    http = createServer((req, res) => res.end(`page at ${req.url}\n`));
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    httpPort = (http.address() as AddressInfo).port;
  });
  afterEach(() => clients.killAll());
  afterAll(() => {
    clients.cleanup();
    http.close();
  });

  /** A background `ssh -N` with forwarding options, running until afterEach. */
  const forwarder = (access: SshAccessForTest, options: string[]) => {
    // INFO: the client logs a refused channel ("open failed") at that level.
    const child = clients.spawn("bash", [
      "-c",
      pasted(access, [...clients.options(access, "INFO"), "-N", "-o", "ExitOnForwardFailure=yes", ...options]),
    ]);
    let stderr = "";
    child.stderr?.on("data", (c: Buffer) => (stderr += c.toString()));
    return { child, stderr: () => stderr };
  };
  const curl = (args: string[]) => clients.run("curl", ["-sS", "--max-time", "30", ...args]);

  it("ssh -L to a local HTTP server fetches the page", async () => {
    const access = await clients.open(ctx.client);
    const port = await freePort();
    forwarder(access, ["-L", `${port}:127.0.0.1:${httpPort}`]);
    await listening(port);
    const got = await curl([`http://127.0.0.1:${port}/via-L`]);
    expect(got).toMatchObject({ code: 0, stdout: "page at /via-L\n" });
  });

  it("ssh -D with curl --socks5-hostname fetches the page (the name is resolved by the daemon)", async () => {
    const access = await clients.open(ctx.client);
    const port = await freePort();
    forwarder(access, ["-D", `127.0.0.1:${port}`]);
    await listening(port);
    const got = await curl(["--socks5-hostname", `127.0.0.1:${port}`, `http://localhost:${httpPort}/via-D`]);
    expect(got).toMatchObject({ code: 0, stdout: "page at /via-D\n" });
  });

  it("forwarding to a non-loopback address is refused by default", async () => {
    const access = await clients.open(ctx.client);
    const port = await freePort();
    const fw = forwarder(access, ["-L", `${port}:192.0.2.1:80`]);
    await listening(port);
    const got = await curl([`http://127.0.0.1:${port}/`]);
    expect(got.code).not.toBe(0);
    await expect
      .poll(fw.stderr, { timeout: 30_000 })
      .toMatch(/open failed: administratively prohibited: 192\.0\.2\.1 is not a loopback address \(sshForwardAny is off\)/);
  });

  it("a forward to a loopback port nobody listens on tells the client why: connection refused on that address", async () => {
    const access = await clients.open(ctx.client);
    const [port, closed] = [await freePort(), await freePort()];
    const fw = forwarder(access, ["-L", `${port}:127.0.0.1:${closed}`]);
    await listening(port);
    const got = await curl([`http://127.0.0.1:${port}/`]);
    expect(got.code).not.toBe(0);
    await expect
      .poll(fw.stderr, { timeout: 30_000 })
      .toMatch(new RegExp(`open failed: connect failed: connection refused on 127\\.0\\.0\\.1:${closed}`));
    // ssh -W (stdio forwarding) shows it too, and exits 255.
    const direct = await clients.run("bash", ["-c", pasted(access, [...clients.options(access, "INFO"), "-W", `127.0.0.1:${closed}`])]);
    expect(direct.code).toBe(255);
    expect(direct.stderr).toContain(`connect failed: connection refused on 127.0.0.1:${closed}`);
  });

  it("a forward to a name that does not resolve says so", async () => {
    const access = await clients.open(ctx.client);
    const direct = await clients.run("bash", ["-c", pasted(access, [...clients.options(access, "INFO"), "-W", "no-such-host.invalid:80"])]);
    expect(direct.code).toBe(255);
    expect(direct.stderr).toMatch(/connect failed: no-such-host\.invalid does not resolve \(ENOTFOUND\)/);
  });

  it("ssh -R listens on loopback on the daemon's side and forwards back", async () => {
    const access = await clients.open(ctx.client);
    const port = await freePort();
    forwarder(access, ["-R", `127.0.0.1:${port}:127.0.0.1:${httpPort}`]);
    await listening(port);
    const got = await curl([`http://127.0.0.1:${port}/via-R`]);
    expect(got).toMatchObject({ code: 0, stdout: "page at /via-R\n" });
  });

  it("ssh -R on a non-loopback address is refused: the client's forward fails", async () => {
    const access = await clients.open(ctx.client);
    const port = await freePort();
    const run = await clients.ssh(access, ["-N", "-o", "ExitOnForwardFailure=yes", "-R", `0.0.0.0:${port}:127.0.0.1:${httpPort}`]);
    expect(run.code).toBe(255);
    expect(run.stderr).toContain(`remote port forwarding failed for listen port ${port}`);
    await expect.poll(() => ctx.daemon.logLines.some((l) => l.includes("ssh: remote forward refused")), { timeout: 5000 }).toBe(true);
  });

  it("the VS Code Remote-SSH handshake: `ssh -T -D PORT … bash` with its script on stdin, then SOCKS through -D", async () => {
    const access = await clients.open(ctx.client);
    const port = await freePort();
    // A stand-in for VS Code's install script: it prints its markers and keeps the session open, as the server does.
    const script = `echo "${"6f0bd0d6"}: start"\necho "listeningOn==${httpPort}=="\necho "${"6f0bd0d6"}: end"\nexec sleep 60\n`;
    const child = clients.spawn("bash", ["-c", pasted(access, [...clients.options(access), "-T", "-D", String(port)], "bash")], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    child.stdout?.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stdin?.write(script);
    await expect.poll(() => stdout, { timeout: 30_000 }).toContain("6f0bd0d6: end");
    const served = /listeningOn==(\d+)==/.exec(stdout)![1];
    await listening(port);
    const got = await curl(["--socks5-hostname", `127.0.0.1:${port}`, `http://127.0.0.1:${served}/vscode`]);
    expect(got).toMatchObject({ code: 0, stdout: "page at /vscode\n" });
  });
});
