// deploy/kubernetes/sandbox.yaml run with `podman kube play` and the image built here (render.ts says
// what a provider's templating changes), checked from this machine through the published ports:
// readiness, a shell job, a prepare that a recreate later restores, links that name the public host
// (curl --resolve, and Chromium opening the web terminal), SSH at the public SSH address, a token
// rotated through its Secret, `podman kube down` and play again on the same volume; then a fleet
// of four sandboxes from the same manifest at once, one recreated while the others work, no token
// of one accepted by another.
//
// Podman here runs no systemd, so its healthcheck timers never fire ("unable to get systemd
// connection"): readiness is polled on /readyz, and the liveness probe podman made a healthcheck of
// is run by hand (`podman healthcheck run`). Needs podman that answers, mmdebstrap (image/build.sh
// --offline) and Chromium; without podman it is skipped with a printed reason, unless
// HOTLINE_REQUIRE_IMAGE=1 (CI). Pods and volumes are named hotline-kube-*-<pid> and removed at the end.
import { execFile, execFileSync, spawn, spawnSync } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer as createTcpServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, type HotlineClient } from "../../client/index.js";
import { renderSandbox } from "./render.js";

const ROOT = new URL("../../", import.meta.url).pathname;
const SHOTS = join(ROOT, ".tmp");
const STANDIN = join(ROOT, "test/fixtures/nixpkgs-standin");
const CHROMIUM = "/usr/bin/chromium";
const TAG = process.env.HOTLINE_IMAGE_TAG ?? "localhost/hotline-desktop:test";
const HOME = "/home/agent";
const WORKSPACE = `${HOME}/workspace/kube`;
const PUBLIC_DOMAIN = "hotline.test";

function podmanAnswers(): string | undefined {
  const res = spawnSync("podman", ["info"], { encoding: "utf8", timeout: 30_000 });
  if (res.status === 0) return undefined;
  return res.error ? "podman is not installed" : (res.stderr.trim().split("\n").pop() ?? `podman info: exit ${res.status}`);
}
const missing = podmanAnswers();
if (missing) {
  if (process.env.HOTLINE_REQUIRE_IMAGE === "1")
    throw new Error(`podman is required here (HOTLINE_REQUIRE_IMAGE=1) but does not answer: ${missing}`);
  console.warn(`[skip] kube play test: ${missing}`);
}

function podman(args: string[], timeoutMs = 180_000): string {
  return execFileSync("podman", args, { encoding: "utf8", timeout: timeoutMs, stdio: ["pipe", "pipe", "pipe"] }).trim();
}
/** podman without blocking the test's process (a play takes seconds to a minute on a busy machine). */
function podmanAsync(args: string[], timeoutMs = 300_000): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile("podman", args, { encoding: "utf8", timeout: timeoutMs }, (err, stdout, stderr) =>
      err ? reject(new Error(`podman ${args.join(" ")}: ${err.message}\n${stderr}`)) : resolve(stdout.trim()),
    ),
  );
}

/** podman that may fail (clean-up); its status. */
function podmanQuiet(args: string[]): number | null {
  return podmanTry(args).status;
}
function podmanTry(args: string[]): { status: number | null; out: string } {
  const res = spawnSync("podman", args, { encoding: "utf8", timeout: 120_000 });
  return { status: res.status, out: `${res.stdout}${res.stderr}` };
}

function runLogged(cmd: string, args: string[], log: string): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const out = createWriteStream(log, { flags: "a" });
    const child = spawn(cmd, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
    child.once("error", reject);
    child.once("close", (code) => out.end(() => resolve(code)));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createTcpServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const newToken = (): string => `hl_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url")}`;

/** curl from this machine; its stdout, with `-w` output last when asked. */
function curl(args: string[]): { status: number | null; out: string } {
  const res = spawnSync("curl", ["-sS", "--max-time", "20", ...args], { encoding: "utf8" });
  return { status: res.status, out: res.stdout + res.stderr };
}

/** One sandbox of the manifest: its names, ports and token, and what playing it made. */
class Sandbox {
  readonly scratch: string;
  readonly file: string;
  /** The manifest without its PersistentVolumeClaim: what `kubectl apply` of an existing claim amounts to. */
  readonly fileAgain: string;
  httpPort = 0;
  sshPort = 0;
  token = "";
  names!: ReturnType<typeof renderSandbox>;
  /** Anonymous volumes (the emptyDirs) of pods played so far, removed at the end. */
  readonly anonymous = new Set<string>();

  constructor(
    readonly id: string,
    dir: string,
    readonly warm = false,
  ) {
    this.scratch = join(dir, id);
    mkdirSync(join(this.scratch, "nix"), { recursive: true });
    writeFileSync(join(this.scratch, "nix/registry.json"), '{"flakes":[],"version":2}\n');
    this.file = join(this.scratch, "sandbox.yaml");
    this.fileAgain = join(this.scratch, "sandbox-again.yaml");
  }

  get publicHost(): string {
    return `${this.id}.${PUBLIC_DOMAIN}`;
  }
  get base(): string {
    return `http://127.0.0.1:${this.httpPort}`;
  }
  get url(): string {
    return `ws://127.0.0.1:${this.httpPort}`;
  }

  async render(): Promise<void> {
    if (!this.httpPort) {
      this.httpPort = await freePort();
      this.sshPort = await freePort();
      this.token = newToken();
    }
    this.names = renderSandbox({
      id: this.id,
      image: TAG,
      httpPort: this.httpPort,
      sshPort: this.sshPort,
      token: this.token,
      publicHost: this.publicHost,
      standin: STANDIN,
      nixConfigDir: join(this.scratch, "nix"),
      warm: this.warm,
    });
    writeFileSync(this.file, this.names.yaml);
    writeFileSync(this.fileAgain, this.names.yamlAgain);
  }

  /** `podman kube play`, then polls /readyz until 200; the milliseconds it took. */
  async play(): Promise<number> {
    const started = Date.now();
    // The claim's volume, once it exists, is the claim's: podman 4.3 refuses to make it again.
    const again = podmanQuiet(["volume", "exists", this.names.homeVolume]) === 0;
    await podmanAsync(["kube", "play", again ? this.fileAgain : this.file]);
    for (const line of podman(["pod", "inspect", this.names.pod, "--format", "{{range .Containers}}{{.Name}} {{end}}"]).split(/\s+/))
      if (line)
        for (const mount of this.mounts(line))
          if (mount.Name && mount.Type === "volume" && !this.isNamed(mount.Name)) this.anonymous.add(mount.Name);
    const deadline = Date.now() + 180_000;
    for (;;) {
      const res = curl(["-o", "/dev/null", "-w", "%{http_code}", `${this.base}/readyz`]);
      if (res.out.endsWith("200")) break;
      if (Date.now() > deadline)
        throw new Error(
          `${this.id}: /readyz never answered 200 (${res.out}); logs:\n${podman(["logs", this.names.container]).slice(-4000)}`,
        );
      await sleep(250);
    }
    // Podman writes a Secret volume's data undecoded (4.3: base64 text): the token is whatever the file holds.
    // A warm sandbox's token is the one its daemon made in the home.
    const tokenFile = this.names.secret
      ? join(this.volumePath(this.names.secret), "token")
      : join(this.volumePath(this.names.homeVolume), ".config/hotline/token");
    this.token = readFileSync(tokenFile, "utf8").trim();
    return Date.now() - started;
  }

  private mounts(container: string): Array<{ Name?: string; Type: string }> {
    return JSON.parse(podman(["container", "inspect", container, "--format", "{{json .Mounts}}"])) as Array<{
      Name?: string;
      Type: string;
    }>;
  }

  private isNamed(volume: string): boolean {
    return volume === this.names.homeVolume || volume === this.names.secret;
  }

  volumePath(volume: string): string {
    return podman(["volume", "inspect", volume, "--format", "{{.Mountpoint}}"]);
  }

  client(token = this.token): Promise<HotlineClient> {
    return connect({ url: this.url, token, connectTimeoutMs: 10_000 });
  }

  /** `podman kube down`: the pod goes, its volumes and the Secret stay. */
  async down(): Promise<void> {
    const failed = await podmanAsync(["kube", "down", this.file]).then(
      () => undefined,
      (err: Error) => err,
    );
    // Podman 4.3 sometimes fails to unmount a removed container's /dev/shm at once ("unlinkat …
    // userdata/shm: device or resource busy"), leaving the pod half removed: removing it again does it.
    for (let tries = 0; failed && podmanQuiet(["pod", "exists", this.names.pod]) === 0; tries++) {
      if (tries === 5) throw failed;
      await sleep(1000);
      podmanQuiet(["pod", "rm", "-f", this.names.pod]);
    }
  }

  /** Everything this sandbox made, by the names it was given. */
  remove(): void {
    if (!this.names) return;
    if (existsSync(this.file)) podmanQuiet(["kube", "down", this.file]);
    podmanQuiet(["pod", "rm", "-f", this.names.pod]);
    for (const v of [this.names.homeVolume, this.names.secret, ...this.anonymous]) if (v) podmanQuiet(["volume", "rm", "-f", v]);
    if (this.names.secret) podmanQuiet(["secret", "rm", this.names.secret]);
  }
}

/** A shell job's output, failing the test when it did not succeed. */
async function sh(client: HotlineClient, command: string, options: Record<string, unknown> = {}): Promise<string> {
  const { status, output } = await client.shell(command, { wait: 120_000, ...options });
  const text = output?.toString("utf8") ?? "";
  expect(status.state, `${command}: ${text}`).toBe("succeeded");
  return text;
}

/** Polls /readyz until it answers `code`. */
async function readyzUntil(box: Sandbox, code: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = curl(["-o", "/dev/null", "-w", "%{http_code}", `${box.base}/readyz`]);
    if (res.out.endsWith(code)) return;
    if (Date.now() > deadline) throw new Error(`${box.id}: /readyz answers ${res.out}, not ${code}`);
    await sleep(200);
  }
}

function memoryOf(box: Sandbox): string {
  const res = spawnSync("podman", ["stats", "--no-stream", "--format", "{{.Name}} {{.MemUsage}}", box.names.container], {
    encoding: "utf8",
    timeout: 60_000,
  });
  return (res.stdout || res.stderr).trim();
}

describe.skipIf(missing !== undefined)("deploy/kubernetes/sandbox.yaml under podman kube play", () => {
  const dir = mkdtempSync(join(tmpdir(), "hotline-kube-"));
  const times: Record<string, number | string> = {};
  const box = new Sandbox(`kube-a-${process.pid}`, dir);
  const fleet = [1, 2, 3, 4].map((n) => new Sandbox(`kube-f${n}-${process.pid}`, dir));
  const warm = new Sandbox(`kube-w-${process.pid}`, dir, true);
  let client: HotlineClient;
  const before: { outputJob?: string; jobs: string[]; storePath?: string } = { jobs: [] };

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    const log = join(SHOTS, "kube-image-build.log");
    writeFileSync(log, "");
    const started = Date.now();
    // The image boot test builds the same tag: whichever runs second builds from the layer cache.
    // HOTLINE_KUBE_REUSE_IMAGE=1 takes the tag as it is (iterating on this file without a rebuild).
    if (process.env.HOTLINE_KUBE_REUSE_IMAGE !== "1" || podmanQuiet(["image", "exists", TAG]) !== 0) {
      const build = ["-n", "10", "sh", join(ROOT, "image/build.sh"), "--offline", "--tag", TAG, "--engine", "podman"];
      const code = await runLogged("nice", build, log);
      if (code !== 0) throw new Error(`image/build.sh failed (${code}); the end of ${log}:\n${readFileSync(log, "utf8").slice(-4000)}`);
    }
    times.build = Date.now() - started;
    await box.render();
    box.remove(); // a leftover of an earlier run with this pid
    times.play = await box.play();
    client = await box.client();
  }, 3_600_000);

  afterAll(async () => {
    await client?.close().catch(() => undefined);
    for (const b of [box, warm, ...fleet]) b.remove();
    rmSync(dir, { recursive: true, force: true });
    console.info(`[kube] times (ms) and memory: ${JSON.stringify(times)}`);
  }, 300_000);

  it("runs as agent with a read-only root, no new privileges and a seccomp filter; podman's healthcheck (the liveness probe) passes", async () => {
    times.idleMemory = memoryOf(box);
    const out = await sh(
      client,
      "id -un; grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status; touch /etc/probe 2>&1 || true; touch /tmp/probe && echo tmp-writable",
    );
    expect(out).toMatch(/^agent\n/);
    expect(out).toMatch(/NoNewPrivs:\s+1/);
    expect(out).toMatch(/Seccomp:\s+2/);
    expect(out).toMatch(/Read-only file system/);
    expect(out).toContain("tmp-writable");
    // What `podman kube play` made of the startup and liveness probes: curl /healthz inside.
    const check = JSON.parse(podman(["container", "inspect", box.names.container, "--format", "{{json .Config.Healthcheck}}"])) as {
      Test: string[];
    };
    expect(check.Test.join(" ")).toContain("/healthz");
    const run = podmanTry(["healthcheck", "run", box.names.container]);
    expect(
      run.status,
      `${run.out} ${podmanTry(["container", "inspect", box.names.container, "--format", "{{json .State.Health}} {{json .Config.Healthcheck}}"]).out}`,
    ).toBe(0);
    const info = await client.request("state.info");
    expect(info.user).toBe("agent");
    expect(info.ssh).toMatchObject({ available: true });
    expect(info.desktop).toMatchObject({ available: true });
  }, 600_000);

  it("runs a shell job and prepares a workspace with the stand-in nixpkgs (pushed to the home's binary cache)", async () => {
    const shell = await client.shell("echo kube-kept-$((6*7))", { wait: 60_000 });
    before.outputJob = shell.status.id;
    expect(shell.output?.toString()).toBe("kube-kept-42\n");
    await sh(client, `mkdir -p ${WORKSPACE}`);
    const reply = await client.request("prepare", { workspace: WORKSPACE, packages: ["hello-a"] });
    expect(reply.ready).toBe(false);
    if (!reply.ready && reply.job) {
      const done = await client.request("jobs.wait", { job: reply.job.id, timeoutMs: 300_000 });
      expect(done.job.state, JSON.stringify(done.job.error)).toBe("succeeded");
      expect(done.job.result).toMatchObject({ publication: { published: true } });
      before.storePath = (done.job.result as { environment: { storePath: string } }).environment.storePath;
    }
    expect(await sh(client, "hello-a", { cwd: WORKSPACE })).toBe("hello-a from standin 1\n");
  }, 600_000);

  it("mints links that name the public host, which open from this machine through the published port under that name only", async () => {
    const resolve = `${box.publicHost}:${box.httpPort}:127.0.0.1`;
    const link = await client.request("terminal.open", { cols: 100, rows: 30 });
    expect(link.available).toBe(true);
    if (!link.available) return;
    const publicBase = `http://${box.publicHost}:${box.httpPort}`;
    expect(link.webTerminalUrl!.startsWith(`${publicBase}/web/terminal#`)).toBe(true);
    const page = curl(["--resolve", resolve, "-o", "/dev/null", "-w", "%{http_code}", link.webTerminalUrl!.split("#")[0]!]);
    expect(page.out).toBe("200");
    // The same page under a name the daemon was not given is refused (DNS rebinding).
    const other = curl([
      "--resolve",
      `elsewhere.test:${box.httpPort}:127.0.0.1`,
      "-o",
      "/dev/null",
      "-w",
      "%{http_code}",
      `http://elsewhere.test:${box.httpPort}/web/terminal`,
    ]);
    expect(other.out).toBe("403");

    // A preview of a server in the sandbox: `{port}.<public host>`, through the same published port.
    const server = await client.request("shell", { command: "cd /tmp && exec python3 -m http.server 8123 --bind 127.0.0.1", wait: 0 });
    const preview = await client.request("preview.open", { port: 8123 });
    expect(preview.available).toBe(true);
    if (!preview.available) return;
    expect(preview.url.startsWith(`http://8123.${box.publicHost}:${box.httpPort}/`)).toBe(true);
    await client.request("ports.wait", { port: 8123, timeoutMs: 30_000 });
    const jar = join(box.scratch, "cookies");
    const listing = curl(["--resolve", `8123.${resolve}`, "-L", "-c", jar, "-b", jar, preview.url]);
    expect(listing.out).toContain("Directory listing for /");
    await client.request("jobs.cancel", { job: (server as { job: { id: string } }).job.id });

    // sshCommand names the public SSH address and pins the host key; pasted as given into a shell
    // with no known_hosts and no terminal, OpenSSH reaches the sandbox with it.
    const ssh = await client.request("ssh.open", {});
    expect(ssh.available).toBe(true);
    if (!ssh.available) return;
    expect(ssh.sshCommand.startsWith(`ssh -p ${box.sshPort} `)).toBe(true);
    expect(ssh.sshCommand.endsWith(` ${ssh.sshUser}@127.0.0.1`)).toBe(true);
    expect(ssh.sshCommand).toContain("StrictHostKeyChecking=yes");
    const home = join(box.scratch, "ssh-home");
    mkdirSync(home, { recursive: true });
    const run = spawnSync("bash", ["-c", `${ssh.sshCommand.replace(/^ssh /, "ssh -o BatchMode=yes ")} id -un`], {
      encoding: "utf8",
      timeout: 60_000,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, HOME: home },
    });
    expect(run.stdout.trim(), run.stderr).toBe("agent");
  }, 600_000);

  it("Chromium opens the web terminal through the public name and the published port", async () => {
    const link = await client.request("terminal.open", { cols: 100, rows: 30 });
    if (!link.available) throw new Error(link.reason);
    const { chromium } = await import("playwright-core");
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", `--host-resolver-rules=MAP ${box.publicHost} 127.0.0.1`],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1000, height: 640 } });
      await page.goto(link.webTerminalUrl!);
      await page.waitForFunction(() => (window as unknown as { hotline?: { connects: number } }).hotline?.connects === 1, null, {
        timeout: 30_000,
      });
      const marker = `kube-terminal-${process.pid}`;
      await page.keyboard.type(`echo ${marker} $(id -un) $HOSTNAME\n`);
      await page.waitForFunction(
        (m) => {
          const term = (
            window as unknown as {
              hotline: {
                term: { buffer: { active: { length: number; getLine(i: number): { translateToString(t: boolean): string } | undefined } } };
              };
            }
          ).hotline.term;
          for (let i = 0; i < term.buffer.active.length; i++)
            if (new RegExp(`^${m} agent`).test(term.buffer.active.getLine(i)?.translateToString(true) ?? "")) return true;
          return false;
        },
        marker,
        { timeout: 30_000 },
      );
      expect(page.url().startsWith(`http://${box.publicHost}:${box.httpPort}/web/terminal`)).toBe(true);
      await page.screenshot({ path: join(SHOTS, "kube-web-terminal.png") });
    } finally {
      await browser.close();
    }
    times.workingMemory = memoryOf(box);
  }, 600_000);

  it("readiness goes false while the state directory is not writable, and back", async () => {
    await sh(client, "chmod 0500 ~/.local/state/hotline");
    try {
      await readyzUntil(box, "503");
      expect(curl([`${box.base}/readyz`]).out).toBe("not ready\n");
    } finally {
      await sh(client, "chmod 0700 ~/.local/state/hotline");
    }
    await readyzUntil(box, "200");
  }, 600_000);

  it("after `podman kube down` and play again on the same volume: the token, the jobs and their output, and prepare restores the environment", async () => {
    before.jobs = (await client.request("jobs.list", { limit: 1000 })).jobs.map((j) => j.id);
    const token = box.token;
    await client.close();
    await box.down();
    expect(podman(["volume", "ls", "--format", "{{.Name}}"]).split("\n")).toContain(box.names.homeVolume);
    times.replay = await box.play();
    expect(box.token).toBe(token);
    client = await box.client();
    const after = (await client.request("jobs.list", { limit: 1000 })).jobs.map((j) => j.id);
    for (const id of before.jobs) expect(after).toContain(id);
    expect(JSON.stringify(await client.request("jobs.output", { job: before.outputJob! }))).toContain("kube-kept-42");
    // /nix was the pod's own (an emptyDir): the store path went with it and comes back from the home.
    expect(await sh(client, `test -e ${before.storePath} && echo kept || echo gone`)).toBe("gone\n");
    const started = Date.now();
    const reply = await client.request("prepare", { workspace: WORKSPACE, packages: ["hello-a"] });
    times.restore = Date.now() - started;
    expect(reply, JSON.stringify(reply)).toMatchObject({ ready: true, restored: {} });
    expect(await sh(client, "hello-a", { cwd: WORKSPACE })).toBe("hello-a from standin 1\n");
  }, 600_000);

  it("a token rotated through its Secret (the file rewritten, as kubelet does) ends the old one and its connections without a restart", async () => {
    const { pid } = await client.request("state.info");
    const held = await client.openConnection();
    const closedWith = new Promise<string>((resolve) => held.onClose(resolve));
    const next = newToken();
    const dirOfSecret = box.volumePath(box.names.secret!);
    writeFileSync(join(dirOfSecret, "token.new"), next);
    renameSync(join(dirOfSecret, "token.new"), join(dirOfSecret, "token"));
    const deadline = Date.now() + 30_000;
    let fresh: HotlineClient | undefined;
    while (!fresh) {
      fresh = await box.client(next).catch(async (err: unknown) => {
        if (Date.now() > deadline) throw err;
        await sleep(200);
        return undefined;
      });
    }
    expect(await closedWith).toMatch(/^code 4001/);
    await expect(box.client(box.token)).rejects.toMatchObject({ code: "unauthorized" });
    expect((await fresh.request("state.info")).pid).toBe(pid);
    client = fresh;
    box.token = next;
  }, 600_000);

  it("late binding: a warm sandbox (the template's pod: no Secret) is bound by writing the project's token over exec's stdin, then its .env by secrets.write", async () => {
    await client.close();
    await box.down(); // room on two cores; its volume stays until the end
    await warm.render();
    warm.remove();
    times.warmReady = await warm.play();
    const own = warm.token; // what the daemon made; read here only to see it stop working
    const generic = await warm.client(own);
    const held = await generic.openConnection();
    const closedWith = new Promise<string>((resolve) => held.onClose(resolve));
    // README "Late binding", with podman exec for kubectl exec: the token on stdin, never in argv or env.
    const project = newToken();
    const bind = spawnSync(
      "podman",
      ["exec", "-i", warm.names.container, "sh", "-c", 'umask 077; f=$HOME/.config/hotline/token; cat > "$f.new" && mv -f "$f.new" "$f"'],
      { input: project, encoding: "utf8", timeout: 60_000 },
    );
    expect(bind.status, bind.stderr).toBe(0);
    const deadline = Date.now() + 30_000;
    let bound: HotlineClient | undefined;
    while (!bound) {
      bound = await warm.client(project).catch(async (err: unknown) => {
        if (Date.now() > deadline) throw err;
        await sleep(200);
        return undefined;
      });
    }
    expect(await closedWith).toMatch(/^code 4001/);
    await expect(warm.client(own)).rejects.toMatchObject({ code: "unauthorized" });
    try {
      await sh(
        bound,
        "git init -q -b main ~/origin && git -C ~/origin -c user.name=t -c user.email=t@example.com commit -q --allow-empty -m init",
      );
      const added = await bound.request("repos.add", { repo: "app", url: `file://${HOME}/origin`, wait: 120_000 });
      expect(added.job.state, JSON.stringify(added.job.error)).toBe("succeeded");
      const written = await bound.request("secrets.write", { repo: "app", values: { API_KEY: "k-123" } });
      expect(written.names).toEqual(["API_KEY"]);
      expect(await sh(bound, `cat ${written.path}; git -C $(dirname ${written.path}) status --porcelain --ignored .env`)).toMatch(
        /API_KEY=k-123\n!! \.env\n$/,
      );
    } finally {
      await bound.close();
      await generic.close().catch(() => undefined);
    }
    warm.remove();
  }, 600_000);

  it("four sandboxes from the same manifest at once: each its own volume and token, driven in parallel, one recreated while the others work, no cross-talk", async () => {
    box.remove(); // room for the fleet on two cores
    const started = Date.now();
    for (const b of fleet) {
      await b.render();
      b.remove();
    }
    const boots = await Promise.all(fleet.map((b) => b.play()));
    times.fleetReady = Date.now() - started;
    times.fleetBoots = boots.join(",");
    expect(new Set(fleet.map((b) => b.token)).size).toBe(4);
    expect(new Set(fleet.map((b) => b.names.homeVolume)).size).toBe(4);
    const clients = await Promise.all(fleet.map((b) => b.client()));
    try {
      // Each writes its own name in its home, in parallel.
      await Promise.all(clients.map((c, i) => sh(c, `echo ${fleet[i]!.id} > ~/whoami && cat ~/whoami`)));
      // A token of one is refused by every other.
      for (const [i, b] of fleet.entries())
        for (const [j, other] of fleet.entries())
          if (i !== j) await expect(other.client(b.token)).rejects.toMatchObject({ code: "unauthorized" });

      // The second is recreated while the others run jobs.
      const [first, second, ...rest] = fleet;
      await clients[1]!.close();
      const working = Promise.all(
        [0, 2, 3].map(async (i) => {
          let runs = 0;
          for (; runs < 5; runs++) expect(await sh(clients[i]!, "cat ~/whoami")).toBe(`${fleet[i]!.id}\n`);
          return runs;
        }),
      );
      await second!.down();
      times.fleetRecreate = await second!.play();
      expect(await working).toEqual([5, 5, 5]);
      clients[1] = await second!.client();
      expect(await sh(clients[1]!, "cat ~/whoami")).toBe(`${second!.id}\n`);
      for (const b of [first!, ...rest]) expect(podman(["pod", "inspect", b.names.pod, "--format", "{{.State}}"])).toBe("Running");
      times.fleetMemory = fleet.map(memoryOf).join("; ");
    } finally {
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    }
  }, 600_000);
});
