// The desktop image built from image/Dockerfile (image/build.sh --offline) and booted with Docker or
// podman: a named volume for /home/agent, the daemon's port published on loopback. Everything is
// checked from the host, through the typed client and the CLI, against the running container, then
// again after the container is recreated on the same volume (the home alone: /nix is the image's own).
//
// Needs docker or podman that answers (`docker info` / `podman info`), the Debian mirror and the
// npm registry (the build), mmdebstrap (the local base) and Chromium (the browser pages). Without an
// engine the file is skipped with a printed reason, unless HOTLINE_REQUIRE_IMAGE=1 (CI).
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { type AddressInfo, createServer as createTcpServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, type HotlineClient } from "../client/index.js";
import { TestDaemon } from "../test/helpers/daemon.js";
import { readListFile } from "./parse.js";

const IMAGE = new URL(".", import.meta.url).pathname;
const ROOT = join(IMAGE, "..");
const SHOTS = join(ROOT, ".tmp");
const CLI = join(ROOT, "dist/cli/main.js");
const STANDIN = join(ROOT, "test/fixtures/nixpkgs-standin");
const CHROMIUM = "/usr/bin/chromium";
const TAG = process.env.HOTLINE_IMAGE_TAG ?? "localhost/hotline-desktop:test";
const NAME = `hotline-boot-${process.pid}`;
const VOLUME = `hotline-boot-home-${process.pid}`;
const HOME = "/home/agent";
const WORKSPACE = `${HOME}/workspace/boot`;
/** The binary cache image/etc/hotline/config.json names (environmentCache.push). */
const BINARY_CACHE = (JSON.parse(readFileSync(join(IMAGE, "etc/hotline/config.json"), "utf8")) as { environmentCache: { push: string } })
  .environmentCache.push;

/** The engine that answers here: docker first (what the README shows), then podman. */
function engineHere(): { engine?: "docker" | "podman"; why: string } {
  const tried: string[] = [];
  for (const engine of ["docker", "podman"] as const) {
    const res = spawnSync(engine, ["info"], { encoding: "utf8", timeout: 30_000 });
    if (res.status === 0) return { engine, why: "" };
    tried.push(`${engine}: ${res.error ? "not installed" : (res.stderr.trim().split("\n").pop() ?? `exit ${res.status}`)}`);
  }
  return { why: tried.join("; ") };
}

const found = engineHere();
const ENGINE = found.engine;
if (!ENGINE) {
  if (process.env.HOTLINE_REQUIRE_IMAGE === "1")
    throw new Error(`an image engine is required here (HOTLINE_REQUIRE_IMAGE=1) but none answers: ${found.why}`);
  console.warn(`[skip] image boot test: no docker or podman answers (${found.why})`);
}

function engine(args: string[], timeoutMs = 120_000): string {
  return execFileSync(ENGINE!, args, { encoding: "utf8", timeout: timeoutMs, stdio: ["ignore", "pipe", "pipe"] }).trim();
}

/** Runs a command, its output appended to a log file; resolves with the exit code. */
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
const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

/** Every top-level entry of a directory tree, as relative paths (directories end in /). */
function listTree(dir: string, prefix = ""): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(`${rel}/`, ...listTree(dir, rel));
    else out.push(rel);
  }
  return out;
}

describe.skipIf(!ENGINE)(`the desktop image booted (${ENGINE ?? "no engine"})`, () => {
  const scratch = mkdtempSync(join(tmpdir(), "hotline-image-boot-"));
  const times: Record<string, number> = {};
  let port = 0;
  let volumeDir = "";
  let tokenFile = "";
  /** The commit build.sh stamped into the image (HEAD when the build started). */
  let builtCommit = "";
  let client: HotlineClient;
  let server: Server | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;
  /** What the first container did that the recreated one must still show. */
  const before: { jobs: string[]; outputJob?: string; outputText?: string; historyMarker?: string; token?: string; storePath?: string } = {
    jobs: [],
  };

  const url = () => `ws://127.0.0.1:${port}`;

  /** Starts a container on the volume and waits until state.info answers from outside. */
  async function boot(): Promise<void> {
    port = await freePort();
    const started = Date.now();
    engine([
      "run",
      "-d",
      "--name",
      NAME,
      "-p",
      `127.0.0.1:${port}:7070`,
      "-v",
      `${VOLUME}:${HOME}`,
      // The stand-in nixpkgs (offline) and a Nix that asks no binary cache: nothing leaves the host.
      "-v",
      `${STANDIN}:/opt/standin:ro`,
      "-v",
      `${scratch}/nix:/opt/boot-nix:ro`,
      "-e",
      "HOTLINE_NIXPKGS=path:/opt/standin",
      "-e",
      "NIX_CONFIG=substituters =\nflake-registry = /opt/boot-nix/registry.json\nconnect-timeout = 2",
      "-e",
      `HOTLINE_PUBLIC_URL=http://127.0.0.1:${port}`,
      TAG,
    ]);
    volumeDir = engine(["volume", "inspect", VOLUME, "--format", "{{.Mountpoint}}"]);
    tokenFile = join(volumeDir, ".config/hotline/token");
    const deadline = Date.now() + 180_000;
    let last = "";
    for (;;) {
      if (Date.now() > deadline) throw new Error(`the daemon did not answer within 180 s (${last}); logs:\n${engine(["logs", NAME])}`);
      if (existsSync(tokenFile)) {
        try {
          client = await connect({ url: url(), tokenFile, connectTimeoutMs: 2_000 });
          await client.request("state.info");
          break;
        } catch (error) {
          last = String(error);
          await client?.close().catch(() => undefined);
        }
      }
      await sleep(200);
    }
    times[times.boot === undefined ? "boot" : times.reboot === undefined ? "reboot" : "reboot2"] = Date.now() - started;
  }

  async function removeContainer(): Promise<void> {
    await client?.close().catch(() => undefined);
    // A graceful stop first (SIGTERM to supervisord, which stops the daemon), as an upgrade would.
    spawnSync(ENGINE!, ["stop", "-t", "10", NAME], { encoding: "utf8", timeout: 60_000 });
    spawnSync(ENGINE!, ["rm", "-f", NAME], { encoding: "utf8", timeout: 60_000 });
  }

  /** A shell job in the container; its output, failing the test when it did not succeed. */
  async function sh(command: string, options: Record<string, unknown> = {}): Promise<string> {
    const { status, output } = await client.shell(command, { wait: 60_000, ...options });
    const text = output?.toString("utf8") ?? "";
    expect(status.state, `${command}: ${text}`).toBe("succeeded");
    return text;
  }

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    mkdirSync(join(scratch, "nix"));
    writeFileSync(join(scratch, "nix/registry.json"), '{"flakes":[],"version":2}\n');
    // Build (the engine's layer cache makes a rebuild of unchanged sources quick).
    const log = join(SHOTS, "image-build.log");
    writeFileSync(log, "");
    builtCommit = execFileSync("git", ["-C", ROOT, "rev-parse", "HEAD"], { encoding: "utf8" }).trim();
    const started = Date.now();
    const code = await runLogged("nice", ["-n", "10", "sh", join(IMAGE, "build.sh"), "--offline", "--tag", TAG, "--engine", ENGINE!], log);
    times.build = Date.now() - started;
    if (code !== 0) throw new Error(`image/build.sh failed (${code}); the end of ${log}:\n${readFileSync(log, "utf8").slice(-4000)}`);
    spawnSync(ENGINE!, ["rm", "-f", NAME], { encoding: "utf8" });
    spawnSync(ENGINE!, ["volume", "rm", "-f", VOLUME], { encoding: "utf8" });
    engine(["volume", "create", VOLUME]);
    await boot();
  }, 3_600_000);

  afterAll(async () => {
    await context?.close().catch(() => undefined);
    await browser?.close().catch(() => undefined);
    server?.close();
    await removeContainer();
    spawnSync(ENGINE!, ["volume", "rm", "-f", VOLUME], { encoding: "utf8", timeout: 60_000 });
    rmSync(scratch, { recursive: true, force: true });
    console.info(`[image] times (ms): ${JSON.stringify(times)}`);
  }, 120_000);

  it("the image keeps nothing in the home, and the first start of an empty volume makes only the daemon's and the user's files", async () => {
    // An anonymous volume is filled from the image's /home/agent: what it shows is what the image holds there.
    const inImage = engine(["run", "--rm", "--entrypoint", "/usr/bin/find", TAG, HOME, "-mindepth", "1"]);
    expect(inImage).toBe("");
    const made = listTree(volumeDir);
    console.info(`[image] the home after the first start: ${made.filter((p) => p.split("/").filter(Boolean).length <= 2).join(" ")}`);
    expect(made).toContain(".config/hotline/token");
    for (const name of [".bashrc", ".profile", ".bash_logout", ".nix-profile", ".nix-defexpr", ".nix-channels"])
      expect(made, `${name} would come from the image`).not.toContain(name);
  });

  it("answers state.info as agent with the image's system config, Nix with flakes, this commit and the host build's guide", async () => {
    const info = await client.request("state.info");
    expect(info.user).toBe("agent");
    expect(info.directories).toMatchObject({ systemConfig: "/etc/hotline", workspaceRoot: `${HOME}/workspace` });
    expect(info.nix).toMatchObject({ available: true, flakes: true });
    expect(info.commit).toBe(builtCommit);

    const host = await TestDaemon.start();
    try {
      const hostClient = await host.client();
      const hostGuide = await hostClient.ok("state.guide");
      await hostClient.close();
      const guide = await client.request("state.guide");
      expect(guide.sha256).toBe(hostGuide.sha256);
      expect(sha256(guide.text)).toBe(guide.sha256);
    } finally {
      await host.stop();
      host.cleanup();
    }

    // The CLI, with the token read from the volume.
    const cli = JSON.parse(
      execFileSync(process.execPath, [CLI, "state", "info", "--json", "--url", url(), "--token-file", tokenFile], { encoding: "utf8" }),
    ) as { user: string; directories: { systemConfig: string } };
    expect(cli.user).toBe("agent");
    expect(cli.directories.systemConfig).toBe("/etc/hotline");
  });

  it("runs shell and terminal jobs as agent with the image's environment", async () => {
    const out = await sh('id -u; id -un; echo "A=$APPIMAGE_EXTRACT_AND_RUN"; echo "H=$HOME"; command -v nix');
    const [uid, user, appimage, home, nix] = out.trim().split("\n");
    expect(Number(uid)).not.toBe(0);
    expect(user).toBe("agent");
    expect(appimage).toBe("A=1");
    expect(home).toBe(`H=${HOME}`);
    expect(nix).toMatch(/\/nix$/);
    const shell = await client.shell("echo kept-output-$((6*7))", { wait: 30_000 });
    before.outputJob = shell.status.id;
    before.outputText = "kept-output-42\n";
    expect(shell.output?.toString()).toBe(before.outputText);

    const terminal = await client.shell("stty size", { pty: { cols: 91, rows: 27 }, wait: 30_000 });
    expect(terminal.status).toMatchObject({ kind: "terminal", state: "succeeded" });
    expect(terminal.output?.toString()).toMatch(/^27 91\r?$/m);
  });

  it("downloads from a server on the host and extracts the archive", async () => {
    const gateway = engine(["inspect", NAME, "--format", "{{range .NetworkSettings.Networks}}{{.Gateway}}{{end}}"]);
    expect(gateway).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    const src = join(scratch, "tool");
    mkdirSync(join(src, "tool-1.0/bin"), { recursive: true });
    writeFileSync(join(src, "tool-1.0/bin/tool"), "#!/bin/sh\necho tool from the host\n", { mode: 0o755 });
    execFileSync("tar", ["-czf", join(scratch, "tool-1.0.tar.gz"), "-C", src, "tool-1.0"]);
    const archive = readFileSync(join(scratch, "tool-1.0.tar.gz"));
    server = createServer((_req, res) => {
      res.writeHead(200, { "Content-Length": archive.length, "Content-Type": "application/gzip" });
      res.end(archive);
    });
    await new Promise<void>((resolve) => server!.listen(0, gateway, resolve));
    const serverPort = (server.address() as AddressInfo).port;

    const download = await client.request("files.download", {
      url: `http://${gateway}:${serverPort}/tool-1.0.tar.gz`,
      dest: `${HOME}/downloads/`,
      parents: true,
      sha256: sha256(archive),
      wait: 60_000,
    });
    expect(download.job, JSON.stringify(download.job)).toMatchObject({ state: "succeeded" });
    const extract = await client.request("files.extract", {
      archive: `${HOME}/downloads/tool-1.0.tar.gz`,
      dest: `${HOME}/tools/tool`,
      strip: 1,
      parents: true,
      wait: 60_000,
    });
    expect(extract.job, JSON.stringify(extract.job)).toMatchObject({ state: "succeeded" });
    expect(await sh(`${HOME}/tools/tool/bin/tool`)).toBe("tool from the host\n");
  });

  it("prepares a workspace with the stand-in nixpkgs, and a job in it sees the environment", async () => {
    await sh(`mkdir -p ${WORKSPACE}`);
    const reply = await client.request("prepare", { workspace: WORKSPACE, packages: ["hello-a"] });
    expect(reply.ready).toBe(false);
    if (!reply.ready && reply.job) {
      const done = await client.request("jobs.wait", { job: reply.job.id, timeoutMs: 300_000 });
      const log = await client.request("jobs.output", { job: reply.job.id });
      expect(done.job.state, `${JSON.stringify(done.job.error)} ${JSON.stringify(log)}`).toBe("succeeded");
      // The image's config pushes every prepared closure to a binary cache in the home: what a recreate restores from.
      expect(done.job.result).toMatchObject({ closure: { arrived: "built" }, publication: { published: true, to: BINARY_CACHE } });
      before.storePath = (done.job.result as { environment: { storePath: string } }).environment.storePath;
    }
    expect(await sh("hello-a", { cwd: WORKSPACE })).toBe("hello-a from standin 1\n");
  });

  it("has no sudo or apt, no setuid or setgid file, no root process; AppImage libraries resolve and a self-extracting program runs without FUSE", async () => {
    expect(await sh("for t in sudo apt apt-get aptitude; do command -v $t || true; done")).toBe("");
    expect(await sh("find / -xdev \\( -perm -4000 -o -perm -2000 \\) -type f 2>/dev/null || true")).toBe("");
    const uids = (await sh("ps -eo uid=,comm="))
      .trim()
      .split("\n")
      .map((line) => line.trim().split(/\s+/));
    expect(uids.length).toBeGreaterThan(3);
    for (const [uid, comm] of uids) expect(Number(uid), `${comm} runs as root`).not.toBe(0);

    const resolvable = await sh("ldconfig -p");
    const libs = readListFile(readFileSync(join(IMAGE, "appimage-excludelist.txt"), "utf8"))
      .map((line) => line.split(/\s+/))
      .filter(([, pkg]) => pkg !== "-")
      .map(([lib]) => lib!);
    expect(libs.length).toBeGreaterThan(30);
    for (const lib of libs) expect(resolvable, `${lib} is not in the linker cache`).toContain(`${lib} (`);

    // AppImage-style: a program with its payload appended that, with APPIMAGE_EXTRACT_AND_RUN=1,
    // extracts itself and runs the payload instead of mounting it with FUSE (which a container lacks).
    const payload = join(scratch, "payload");
    mkdirSync(join(payload, "usr/bin"), { recursive: true });
    writeFileSync(join(payload, "AppRun"), '#!/bin/sh\nexec "$(dirname "$0")/usr/bin/hello" "$@"\n', { mode: 0o755 });
    writeFileSync(join(payload, "usr/bin/hello"), "#!/bin/sh\necho extracted and ran: $*\n", { mode: 0o755 });
    const tar = execFileSync("tar", ["-cz", "-C", payload, "."]);
    const runtime = [
      "#!/bin/sh",
      'if [ "$APPIMAGE_EXTRACT_AND_RUN" != 1 ]; then',
      '  command -v fusermount >/dev/null && [ -e /dev/fuse ] || { echo "needs FUSE" >&2; exit 127; }',
      "fi",
      'dir=$(mktemp -d "${TMPDIR:-/tmp}/appimage_extracted_XXXXXX")',
      'sed \'1,/^__PAYLOAD__$/d\' "$0" | tar -xz -C "$dir"',
      '"$dir/AppRun" "$@"; status=$?',
      'rm -rf "$dir"; exit $status',
      "__PAYLOAD__",
      "",
    ].join("\n");
    await client.request("files.write", {
      path: `${HOME}/Hello.AppImage`,
      data: Buffer.concat([Buffer.from(runtime), tar]).toString("base64"),
      encoding: "base64",
      mode: "0755",
    });
    expect(await sh(`${HOME}/Hello.AppImage one two`)).toBe("extracted and ran: one two\n");
    expect(await sh("test -e /dev/fuse && echo fuse || echo no-fuse")).toBe("no-fuse\n");
  });

  async function openChromium(): Promise<BrowserContext> {
    if (context) return context;
    const { chromium } = await import("playwright-core");
    context = await chromium.launchPersistentContext(join(scratch, "chromium"), {
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update"],
      viewport: { width: 1000, height: 640 },
    });
    return context;
  }

  async function terminalText(page: Page): Promise<string> {
    return page.evaluate(() => {
      const term = (
        window as unknown as {
          hotline: {
            term: { buffer: { active: { length: number; getLine(i: number): { translateToString(t: boolean): string } | undefined } } };
          };
        }
      ).hotline.term;
      const lines: string[] = [];
      for (let i = 0; i < term.buffer.active.length; i++) lines.push(term.buffer.active.getLine(i)?.translateToString(true) ?? "");
      return lines.join("\n");
    });
  }

  it("serves the web terminal and the console through the published port to the host's Chromium; the terminal writes bash history", async () => {
    const link = await client.request("terminal.open", { cols: 100, rows: 30 });
    expect(link.available).toBe(true);
    if (!link.available) return;
    expect(link.webTerminalUrl).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/web/terminal#`));
    const ctx = await openChromium();
    const page = await ctx.newPage();
    await page.goto(link.webTerminalUrl!);
    await page.waitForFunction(() => (window as unknown as { hotline?: { connects: number } }).hotline?.connects === 1);
    before.historyMarker = `boot-history-${process.pid}`;
    await page.keyboard.type(`echo ${before.historyMarker} $(id -un)\n`);
    const deadline = Date.now() + 20_000;
    let text = "";
    while (!new RegExp(`^${before.historyMarker} agent$`, "m").test(text)) {
      if (Date.now() > deadline) throw new Error(`the web terminal never showed the echo:\n${text.slice(-2000)}`);
      await page.waitForTimeout(100);
      text = await terminalText(page);
    }
    await page.screenshot({ path: join(SHOTS, "image-web-terminal.png") });
    await page.close();
    // history -a runs at every prompt (the image's bash rc): the line is on the volume now.
    const history = join(volumeDir, ".bash_history");
    for (let i = 0; i < 50 && !(existsSync(history) && readFileSync(history, "utf8").includes(before.historyMarker)); i++) await sleep(100);
    expect(readFileSync(history, "utf8")).toContain(before.historyMarker);

    const consoleLink = await client.request("console.open", {});
    expect(consoleLink.available).toBe(true);
    if (!consoleLink.available) return;
    expect(consoleLink.consoleUrl).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/web/console#`));
    const consolePage = await ctx.newPage();
    await consolePage.goto(consoleLink.consoleUrl!);
    await consolePage.waitForFunction((title) => (document.body.textContent ?? "").includes(title), "echo kept-output-$((6*7))", {
      timeout: 20_000,
    });
    await consolePage.screenshot({ path: join(SHOTS, "image-console.png") });
    await consolePage.close();
  });

  it("has its desktop up, and its Chromium runs with the image's policy in force", async () => {
    const info = await client.request("state.info");
    expect(info.desktop, JSON.stringify(info.desktop)).toMatchObject({ available: true, display: ":1" });
    // The X display answers, and the XFCE session's panel runs on it.
    await sh("xset -display :1 q >/dev/null");
    expect(await sh("ps -eo comm=")).toMatch(/^xfce4-panel$/m);
    const shot = await client.request("desktop.screenshot", { maxWidth: 800 });
    expect(shot.format).toBe("png");
    writeFileSync(join(SHOTS, "image-desktop.png"), Buffer.from(shot.data, "base64"));

    const opened = await client.request("browser.open", {});
    const { chromium } = await import("playwright-core");
    browser = await chromium.connectOverCDP(opened.cdpUrl);
    const page = await browser.contexts()[0]!.newPage();
    await page.goto("chrome://policy");
    // The page's rows are in shadow DOM, which Playwright's locators see into: name, value, source, scope, level, status.
    await page.getByText("SyncDisabled", { exact: true }).first().waitFor({ timeout: 20_000 });
    const rows = new Map(
      (await page.locator(".policy.row").allInnerTexts()).map((row) => {
        const [name, ...cells] = row.split("\n").map((cell) => cell.trim());
        return [name!, cells] as const;
      }),
    );
    const policy = JSON.parse(readFileSync(join(IMAGE, "etc/chromium/policies/managed/hotline.json"), "utf8")) as Record<string, unknown>;
    for (const [name, value] of Object.entries(policy)) {
      const cells = rows.get(name);
      expect(cells, `${name} is not in force`).toBeDefined();
      expect(cells![0], name).toBe(JSON.stringify(value));
      expect(cells, name).toContain("Mandatory");
      expect(["OK", "Deprecated"], `${name}: ${cells!.join(" | ")}`).toContain(cells![cells!.length - 1]);
    }
    await page.close();
    await browser.close();
    browser = undefined;
    expect(existsSync(join(volumeDir, ".config/hotline/chromium"))).toBe(true);
  });

  it("after a recreate on the same home volume (a fresh /nix from the image): the same token, a prepared workspace ready with no build, the jobs, their output, the history and the browser profile", async () => {
    const listed = await client.request("jobs.list", { limit: 1000 });
    before.jobs = listed.jobs.map((j) => j.id);
    before.token = readFileSync(tokenFile, "utf8");
    expect(before.storePath).toMatch(/^\/nix\/store\/.*-env$/);
    await removeContainer();
    await boot();
    expect(readFileSync(tokenFile, "utf8")).toBe(before.token);

    // The store paths went with the old container's /nix; prepare copies them back from the home's binary cache.
    expect(await sh(`test -e ${before.storePath} && echo kept || echo gone`)).toBe("gone\n");
    const restoreStarted = Date.now();
    const reply = await client.request("prepare", { workspace: WORKSPACE, packages: ["hello-a"] });
    times.restore = Date.now() - restoreStarted;
    expect(reply, JSON.stringify(reply)).toMatchObject({ ready: true, restored: { from: BINARY_CACHE } });
    expect(reply.job).toBeUndefined();
    expect(reply.restored!.paths).toBeGreaterThan(0);
    const after = (await client.request("jobs.list", { limit: 1000 })).jobs;
    // No prepare job ran since the recreate: nothing was evaluated or built.
    expect(after.filter((j) => j.kind === "prepare" && !before.jobs.includes(j.id))).toEqual([]);
    for (const id of before.jobs) expect(after.map((j) => j.id)).toContain(id);
    expect(await sh("hello-a", { cwd: WORKSPACE })).toBe("hello-a from standin 1\n");
    const output = await client.request("jobs.output", { job: before.outputJob! });
    expect(JSON.stringify(output)).toContain("kept-output-42");
    expect(readFileSync(join(volumeDir, ".bash_history"), "utf8")).toContain(before.historyMarker!);
    expect(existsSync(join(volumeDir, ".config/hotline/chromium"))).toBe(true);
    expect(await sh("id -un")).toBe("agent\n");
  });

  it("with the binary cache gone from the home too, prepare of the workspace after a recreate builds again from its definitions and the job sees the environment", async () => {
    await sh(`rm -rf ${new URL(BINARY_CACHE).pathname}`);
    await removeContainer();
    await boot();
    const reply = await client.request("prepare", { workspace: WORKSPACE, packages: ["hello-a"] });
    expect(reply.ready).toBe(false);
    if (!reply.ready && reply.job) {
      const done = await client.request("jobs.wait", { job: reply.job.id, timeoutMs: 300_000 });
      expect(done.job.state, JSON.stringify(done.job.error)).toBe("succeeded");
      expect(done.job.result).toMatchObject({ closure: { arrived: "built" } });
    }
    expect(await sh("hello-a", { cwd: WORKSPACE })).toBe("hello-a from standin 1\n");
  });

  it("reports the image's size and the container's idle memory", async () => {
    const size = Number(engine(["image", "inspect", TAG, "--format", "{{.Size}}"]));
    await sleep(5_000);
    const stats = spawnSync(ENGINE!, ["stats", "--no-stream", "--format", "{{.MemUsage}}", NAME], { encoding: "utf8", timeout: 60_000 });
    console.info(
      `[image] size ${(size / 1e6).toFixed(0)} MB; build ${times.build} ms; run to state.info ${times.boot} ms (recreate ${times.reboot} ms); prepare restoring after the recreate ${times.restore} ms; idle memory ${stats.stdout.trim() || stats.stderr.trim()}`,
    );
    expect(size).toBeGreaterThan(0);
  });
});
