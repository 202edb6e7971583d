import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { XServer } from "../helpers/x-server.js";

/** An X display with a VNC server on loopback, as the desktop link reaches it. */
export interface VncDesktop {
  /** Which VNC server: "TigerVNC" (Xvnc, the image's) or "x11vnc" (on Xvfb). */
  name: string;
  display: string;
  vncPort: number;
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** Whether Xvfb and x11vnc are installed (HOTLINE_REQUIRE_DESKTOP=1 makes their absence a failure). */
export function x11vncAvailable(): boolean {
  const missing = ["Xvfb", "x11vnc"].filter((tool) => {
    try {
      execFileSync("sh", ["-c", `command -v ${tool}`], { stdio: "ignore" });
      return false;
    } catch {
      return true;
    }
  });
  if (missing.length && process.env.HOTLINE_REQUIRE_DESKTOP === "1")
    throw new Error(`the desktop-link tests need ${missing.join(", ")} (HOTLINE_REQUIRE_DESKTOP=1)`);
  if (missing.length) console.warn(`[skip] ${missing.join(", ")} missing: the x11vnc desktop-link tests are skipped`);
  return missing.length === 0;
}

const des = createRequire(import.meta.url)("@novnc/novnc/lib/des.js").default as new (
  key: number[],
) => {
  encrypt(t: number[]): number[];
  enc8(t: number[]): number[];
};

/** The response to a VNC authentication challenge (RFC 6143 §7.2.2), as noVNC computes it. */
export function vncAuthResponse(password: string, challenge: Buffer): Buffer {
  return Buffer.from(new des([...Buffer.from(password, "latin1")]).encrypt([...challenge]));
}

/** A TigerVNC password file (the password DES-encrypted with VNC's fixed key, as `vncpasswd -f` writes it). */
function writePasswordFile(password: string): { file: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), "hotline-vncpw-"));
  const plain = Buffer.alloc(8);
  plain.write(password.slice(0, 8), "latin1");
  const file = join(dir, "passwd");
  writeFileSync(file, Buffer.from(new des([23, 82, 107, 6, 35, 78, 88, 7]).enc8([...plain])), { mode: 0o600 });
  return { file, dir };
}

/** TigerVNC's Xvnc (the image's server); with a password, it asks for VNC authentication only. */
export async function startTigervnc(width: number, height: number, password?: string): Promise<VncDesktop> {
  const pw = password === undefined ? undefined : writePasswordFile(password);
  const x = await XServer.start(width, height, pw ? ["-SecurityTypes", "VncAuth", "-PasswordFile", pw.file] : undefined);
  return {
    name: "TigerVNC",
    display: x.display,
    vncPort: x.vncPort,
    env: x.env,
    async stop() {
      await x.stop();
      if (pw) rmSync(pw.dir, { recursive: true, force: true });
    },
  };
}

async function stopProcess(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((resolve) => proc.once("exit", resolve));
  proc.kill("SIGTERM");
  await exited;
}

/** Xvfb on a display it picks itself, and x11vnc on it (a port it finds free from 25900 up; it says which). */
export async function startX11vnc(width: number, height: number): Promise<VncDesktop> {
  const xvfb = spawn("Xvfb", ["-displayfd", "3", "-screen", "0", `${width}x${height}x24`, "-nolisten", "tcp", "-noreset"], {
    stdio: ["ignore", "ignore", "pipe", "pipe"],
  });
  const log: string[] = [];
  createInterface({ input: xvfb.stderr! }).on("line", (l) => log.length < 200 && log.push(l));
  const number = await new Promise<number>((resolve, reject) => {
    createInterface({ input: xvfb.stdio[3] as NodeJS.ReadableStream }).once("line", (l) => resolve(Number(l.trim())));
    xvfb.once("exit", (code) => reject(new Error(`Xvfb exited (${code}) before it chose a display:\n${log.join("\n")}`)));
  });
  const display = `:${number}`;
  const env = { ...(process.env as Record<string, string>), DISPLAY: display };
  // A solid root like the image's desktop (-noreset: it stays when xsetroot, the first client, leaves).
  execFileSync("xsetroot", ["-solid", "#202020"], { env });
  const vnc = spawn(
    "x11vnc",
    ["-display", display, "-localhost", "-nopw", "-shared", "-forever", "-autoport", "25900", "-ncache", "0", "-quiet"],
    { env, stdio: ["ignore", "pipe", "pipe"] },
  );
  const vncLog: string[] = [];
  createInterface({ input: vnc.stderr! }).on("line", (l) => vncLog.length < 200 && vncLog.push(l));
  const port = await new Promise<number>((resolve, reject) => {
    createInterface({ input: vnc.stdout! }).on("line", (l) => {
      const m = /^PORT=(\d+)/.exec(l);
      if (m) resolve(Number(m[1]));
    });
    vnc.once("exit", (code) => reject(new Error(`x11vnc exited (${code}) before it listened:\n${vncLog.join("\n")}`)));
  });
  return {
    name: "x11vnc",
    display,
    vncPort: port,
    env,
    async stop() {
      await stopProcess(vnc);
      await stopProcess(xvfb);
      rmSync(`/tmp/.X${number}-lock`, { force: true });
      rmSync(`/tmp/.X11-unix/X${number}`, { force: true });
    },
  };
}

/** The scene fixture (text, a gradient, a photo-like image on blue) at `rect`, once it has drawn itself. */
export async function startScene(
  desktop: VncDesktop,
  dir: string,
  rect: { x: number; y: number; width: number; height: number },
): Promise<ChildProcess> {
  const script = new URL("../fixtures/desktop/scene.py", import.meta.url).pathname;
  const ready = join(dir, `scene-${desktop.name}.ready`);
  const proc = spawn("python3", [script, ready, String(rect.x), String(rect.y), String(rect.width), String(rect.height)], {
    env: desktop.env,
    stdio: "ignore",
  });
  const deadline = Date.now() + 30_000;
  while (!existsSync(ready) || !readFileSync(ready, "utf8").includes("ready")) {
    if (proc.exitCode !== null) throw new Error(`the scene window exited (${proc.exitCode})`);
    if (Date.now() > deadline) throw new Error("the scene window did not draw itself in 30 s");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return proc;
}

/** The X display's screen as PNG and as raw RGB (xwd, the X server's own pixels). */
export function grabDisplay(desktop: VncDesktop): { png: Buffer; rgb: Buffer } {
  const xwd = execFileSync("xwd", ["-root", "-silent"], { env: desktop.env, maxBuffer: 64 * 1024 * 1024 });
  const png = execFileSync("convert", ["xwd:-", "png:-"], { input: xwd, maxBuffer: 64 * 1024 * 1024 });
  return { png, rgb: toRgb(png) };
}

/** A PNG's pixels as 8-bit RGB. */
export function toRgb(png: Buffer): Buffer {
  return execFileSync("convert", ["png:-", "-depth", "8", "rgb:-"], { input: png, maxBuffer: 64 * 1024 * 1024 });
}

/** How far two RGB images of one size are apart: mean channel difference, and the share of pixels off by more than 24 in a channel. */
export function compareRgb(a: Buffer, b: Buffer): { mean: number; off: number } {
  if (a.length !== b.length) return { mean: 255, off: 1 };
  let sum = 0;
  let off = 0;
  for (let i = 0; i < a.length; i += 3) {
    const d0 = Math.abs(a[i]! - b[i]!);
    const d1 = Math.abs(a[i + 1]! - b[i + 1]!);
    const d2 = Math.abs(a[i + 2]! - b[i + 2]!);
    sum += d0 + d1 + d2;
    if (Math.max(d0, d1, d2) > 24) off++;
  }
  return { mean: sum / a.length, off: off / (a.length / 3) };
}

/** An image of where two RGB images differ (white: no difference), for a person to look at. */
export function diffPng(a: Buffer, b: Buffer, width: number, height: number): Buffer {
  const out = Buffer.alloc(a.length);
  for (let i = 0; i < a.length; i += 3) {
    const d = Math.max(Math.abs(a[i]! - b[i]!), Math.abs(a[i + 1]! - b[i + 1]!), Math.abs(a[i + 2]! - b[i + 2]!));
    const v = Math.max(0, 255 - d * 4);
    out[i] = 255;
    out[i + 1] = v;
    out[i + 2] = v;
  }
  return execFileSync("convert", ["-size", `${width}x${height}`, "-depth", "8", "rgb:-", "png:-"], { input: out });
}
