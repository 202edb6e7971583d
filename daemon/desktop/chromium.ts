import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { ActionError } from "../../protocol/errors.js";
import { terminateGroup } from "../process/index.js";
import { startChild } from "../watchdog/child-wait.js";

/** Chromium's DevTools endpoint on loopback, once it listens. */
export interface DevTools {
  port: number;
  /** `/devtools/browser/<id>`: the browser target's WebSocket path. */
  browserPath: string;
  pid: number;
}

const START_TIMEOUT_MS = 30_000;
const CHROMIUM = process.env.HOTLINE_CHROMIUM ?? "chromium";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The one Chromium the daemon starts on the desktop, with a profile of its own in the home (the
 * default profile refuses remote debugging) and DevTools on 127.0.0.1 only, on a port Chromium
 * picks (`--remote-debugging-port=0`, read back from DevToolsActivePort: no race for a port).
 * Later calls reuse it; one that was closed is started again.
 */
export class ChromiumBrowser {
  private running: { child: ChildProcess; devtools: Promise<DevTools> } | undefined;
  readonly profile = join(homedir(), ".config", "hotline", "chromium");

  /** The DevTools endpoint, if Chromium runs now (the CDP relay asks). */
  async current(): Promise<DevTools | undefined> {
    return this.running?.devtools.catch(() => undefined);
  }

  ensure(display: string): Promise<DevTools> {
    if (!this.running) this.running = this.start(display);
    return this.running.devtools;
  }

  /** Ends Chromium and its process group (daemon shutdown). */
  async close(): Promise<void> {
    const child = this.running?.child;
    this.running = undefined;
    if (child?.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    terminateGroup(child.pid, 2000);
    await Promise.race([exited, sleep(3000)]);
  }

  private start(display: string): { child: ChildProcess; devtools: Promise<DevTools> } {
    mkdirSync(this.profile, { recursive: true, mode: 0o700 });
    const portFile = join(this.profile, "DevToolsActivePort");
    rmSync(portFile, { force: true });
    const args = [
      "--remote-debugging-address=127.0.0.1",
      "--remote-debugging-port=0",
      `--user-data-dir=${this.profile}`,
      "--no-first-run",
      "--no-default-browser-check",
      // Chromium refuses to run as root with its sandbox; the image runs it as `agent`, with the sandbox.
      ...(process.getuid?.() === 0 ? ["--no-sandbox"] : []),
      "about:blank",
    ];
    const child = startChild(() => spawn(CHROMIUM, args, { env: { ...process.env, DISPLAY: display }, stdio: "ignore", detached: true }));
    child.unref();
    const entry = { child, devtools: Promise.resolve() as unknown as Promise<DevTools> };
    const exited = new Promise<never>((_resolve, reject) => {
      child.once("error", (err: NodeJS.ErrnoException) =>
        reject(
          new ActionError(
            "unavailable",
            err.code === "ENOENT" ? `${CHROMIUM} is not installed` : `${CHROMIUM} could not start: ${err.message}`,
          ),
        ),
      );
      child.once("exit", (code, signal) =>
        reject(new ActionError("unavailable", `${CHROMIUM} exited (${signal ?? code}) before its DevTools endpoint was up`)),
      );
    });
    child.once("exit", () => {
      if (this.running === entry) this.running = undefined;
    });
    exited.catch(() => undefined);
    entry.devtools = Promise.race([exited, this.waitForPort(portFile, child)]);
    entry.devtools.catch(() => {
      if (this.running === entry) this.running = undefined;
      terminateGroup(child.pid, 1000);
    });
    return entry;
  }

  private async waitForPort(portFile: string, child: ChildProcess): Promise<DevTools> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (Date.now() < deadline) {
      let text = "";
      try {
        text = readFileSync(portFile, "utf8");
      } catch {
        // not written yet
      }
      const [port, path] = text.split("\n");
      if (port && path) return { port: Number(port), browserPath: path.trim(), pid: child.pid! };
      await sleep(100);
    }
    throw new ActionError("unavailable", `${CHROMIUM} did not open its DevTools endpoint within ${START_TIMEOUT_MS / 1000} s`);
  }
}

/** The page targets Chromium has open, as browser.open lists them. */
export async function listPages(devtools: DevTools): Promise<Array<{ url: string; title: string }>> {
  const response = await fetch(`http://127.0.0.1:${devtools.port}/json/list`, { signal: AbortSignal.timeout(10_000) });
  const targets = (await response.json()) as Array<{ type: string; url: string; title: string }>;
  return targets.filter((t) => t.type === "page").map((t) => ({ url: t.url, title: t.title }));
}

/** Opens `url` in a new tab (DevTools' /json/new, which wants PUT). */
export async function openTab(devtools: DevTools, url: string): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${devtools.port}/json/new?${encodeURI(url)}`, {
    method: "PUT",
    signal: AbortSignal.timeout(10_000),
  });
  if (!response.ok) throw new ActionError("internal", `Chromium refused to open ${url}: HTTP ${response.status}`);
}
