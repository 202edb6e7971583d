import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { createInterface } from "node:readline";

/** Whether the desktop tests can run: Xvnc, xdotool, xwd, xmodmap, setxkbmap, ImageMagick, python3-tk (HOTLINE_REQUIRE_DESKTOP=1 makes a gap a failure). */
export function desktopToolsAvailable(): boolean {
  const checks: Array<[string, string]> = [
    ["Xvnc", "command -v Xvnc"],
    ["xdotool", "command -v xdotool"],
    ["xwd", "command -v xwd"],
    ["xmodmap", "command -v xmodmap"],
    ["setxkbmap", "command -v setxkbmap"],
    ["xsetroot", "command -v xsetroot"],
    ["convert", "command -v convert"],
    ["python3-tk", "python3 -c 'import tkinter'"],
  ];
  const missing = checks
    .filter(([, check]) => {
      try {
        execFileSync("sh", ["-c", check], { stdio: "ignore", timeout: 20_000 });
        return false;
      } catch {
        return true;
      }
    })
    .map(([tool]) => tool);
  if (missing.length && process.env.HOTLINE_REQUIRE_DESKTOP === "1")
    throw new Error(`the desktop tests need ${missing.join(", ")} (HOTLINE_REQUIRE_DESKTOP=1)`);
  if (missing.length) console.warn(`[skip] ${missing.join(", ")} missing: the desktop tests are skipped`);
  return missing.length === 0;
}

/**
 * A TigerVNC Xvnc X server (so both X and VNC exist) on a display number the server picks itself
 * (-displayfd: no race with other tests), VNC on 127.0.0.1:5900+N without a password.
 */
export class XServer {
  private constructor(
    readonly proc: ChildProcess,
    readonly display: string,
    readonly vncPort: number,
  ) {}

  /** `security` replaces `-SecurityTypes None` (e.g. VNC authentication with a password file). */
  static async start(width = 1600, height = 900, security: string[] = ["-SecurityTypes", "None"]): Promise<XServer> {
    const proc = spawn(
      "Xvnc",
      [
        "-displayfd",
        "3",
        "-geometry",
        `${width}x${height}`,
        "-depth",
        "24",
        "-localhost",
        ...security,
        "-AlwaysShared",
        "-nolisten",
        "tcp",
      ],
      { stdio: ["ignore", "ignore", "pipe", "pipe"] },
    );
    const log: string[] = [];
    createInterface({ input: proc.stderr! }).on("line", (l) => log.length < 200 && log.push(l));
    const number = await new Promise<number>((resolve, reject) => {
      createInterface({ input: proc.stdio[3] as NodeJS.ReadableStream }).once("line", (l) => resolve(Number(l.trim())));
      proc.once("exit", (code) => reject(new Error(`Xvnc exited (${code}) before it chose a display:\n${log.join("\n")}`)));
    });
    const server = new XServer(proc, `:${number}`, 5900 + number);
    execFileSync("xsetroot", ["-solid", "#202020"], { env: { ...process.env, DISPLAY: server.display } });
    return server;
  }

  get env(): Record<string, string> {
    return { ...(process.env as Record<string, string>), DISPLAY: this.display };
  }

  /** Kills the server by its pid and removes its socket and lock. */
  async stop(): Promise<void> {
    if (this.proc.exitCode === null && this.proc.signalCode === null) {
      const exited = new Promise((resolve) => this.proc.once("exit", resolve));
      this.proc.kill("SIGTERM");
      await exited;
    }
    const n = this.display.slice(1);
    rmSync(`/tmp/.X${n}-lock`, { force: true });
    rmSync(`/tmp/.X11-unix/X${n}`, { force: true });
  }
}

/** The recorder fixture (a python3-tk window that writes its events to a file as JSON lines). */
export class Recorder {
  private constructor(
    readonly proc: ChildProcess,
    readonly file: string,
  ) {}

  static async start(
    x: XServer,
    file: string,
    rect: { x: number; y: number; width: number; height: number },
    colour: string,
  ): Promise<Recorder> {
    const script = new URL("../fixtures/desktop/recorder.py", import.meta.url).pathname;
    const proc = spawn("python3", [script, file, String(rect.x), String(rect.y), String(rect.width), String(rect.height), colour], {
      env: x.env,
      stdio: "ignore",
    });
    const recorder = new Recorder(proc, file);
    await recorder.waitFor((e) => e.event === "ready", "the recorder window");
    return recorder;
  }

  events(): Array<Record<string, unknown>> {
    let text = "";
    try {
      text = readFileSync(this.file, "utf8");
    } catch {
      return [];
    }
    return text
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }

  /** Polls the event file (the window's only channel to the test) until an event matches. */
  async waitFor(match: (e: Record<string, unknown>) => boolean, what: string, timeoutMs = 20_000): Promise<Record<string, unknown>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events().find(match);
      if (found) return found;
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${what}; the recorder saw:\n${JSON.stringify(this.events()).slice(-2000)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  stop(): void {
    this.proc.kill("SIGKILL");
  }
}
