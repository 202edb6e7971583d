import WebSocket from "ws";
import { LINK_TOKEN_PREFIX, PAGE_SUBPROTOCOL } from "../../protocol/link.js";
import { vncAuthResponse } from "./vnc-servers.js";

/**
 * A raw RFB viewer on the daemon's desktop socket (/web/vnc), as a page would open it: it sends
 * exactly the bytes a test gives it, so a test can claim any RFB version or split a message.
 */
export class RawViewer {
  private buffered = Buffer.alloc(0);
  private wake: (() => void) | undefined;
  closed: { code: number; reason: string } | undefined;

  private constructor(private readonly ws: WebSocket) {
    ws.on("message", (data: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, data]);
      this.wake?.();
    });
    ws.on("close", (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.wake?.();
    });
  }

  /** Opens the socket of a desktop link (its URL from desktop.open). */
  static async open(desktopUrl: string): Promise<RawViewer> {
    const url = new URL(desktopUrl);
    const token = new URLSearchParams(url.hash.slice(1)).get("token")!;
    const ws = new WebSocket(`ws://${url.host}/web/vnc`, [PAGE_SUBPROTOCOL, `${LINK_TOKEN_PREFIX}${token}`], { origin: url.origin });
    // Listening from the start: the server's greeting can arrive in the same read as the upgrade
    // response, and ws then emits it right after "open", before an await would resume.
    const viewer = new RawViewer(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    return viewer;
  }

  send(bytes: Buffer | number[] | string): void {
    this.ws.send(typeof bytes === "string" ? Buffer.from(bytes, "latin1") : Buffer.from(bytes));
  }

  /** The next `n` bytes from the server; rejects (with the close reason) when the stream ends first. */
  async read(n: number, timeoutMs = 20_000): Promise<Buffer> {
    const deadline = Date.now() + timeoutMs;
    while (this.buffered.length < n) {
      if (this.closed)
        throw new Error(`the desktop socket closed (${this.closed.code} ${this.closed.reason}) while ${n} bytes were awaited`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${n} bytes from the VNC server (have ${this.buffered.length})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
    const out = this.buffered.subarray(0, n);
    this.buffered = this.buffered.subarray(n);
    return out;
  }

  /** Resolves once the socket has closed. */
  async closedNow(timeoutMs = 20_000): Promise<{ code: number; reason: string }> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed) {
      if (Date.now() > deadline) throw new Error("the desktop socket did not close");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return this.closed;
  }

  close(): void {
    this.ws.close();
  }
}

/** How a VNC server reads a client's minor version (RFC 6143 §7.1.1; TigerVNC, libvncserver). */
export function serverReading(minor: number): 3 | 7 | 8 {
  return minor === 7 ? 7 : minor > 7 ? 8 : 3;
}

/**
 * A complete, well-behaved handshake claiming `version` ("003.005"), answering as the server reads
 * that version; with `password`, VNC authentication (its response sent in two halves, as a slow
 * network delivers it). Returns the screen size from ServerInit.
 */
export async function handshake(
  viewer: RawViewer,
  version: string,
  password?: string,
): Promise<{ width: number; height: number; securityTypes: number[] }> {
  const server = (await viewer.read(12)).toString("latin1");
  if (!/^RFB 003\.00[378]\n$/.test(server)) throw new Error(`unexpected server greeting ${JSON.stringify(server)}`);
  viewer.send(`RFB ${version}\n`);
  const minor = Math.min(serverReading(Number(version.split(".")[1])), serverReading(Number(server.slice(8, 11))));
  let types: number[];
  let chosen: number;
  if (minor === 3) {
    chosen = (await viewer.read(4)).readUInt32BE(0);
    types = [chosen];
  } else {
    const count = (await viewer.read(1))[0]!;
    if (count === 0) throw new Error("the server refused the connection");
    types = [...(await viewer.read(count))];
    chosen = password !== undefined ? 2 : 1;
    if (!types.includes(chosen)) throw new Error(`the server offers security types ${types}, not ${chosen}`);
    viewer.send([chosen]);
  }
  if (chosen === 2) {
    if (password === undefined) throw new Error("the server asks for VNC authentication");
    const response = vncAuthResponse(password, await viewer.read(16));
    viewer.send(response.subarray(0, 8)); // two WebSocket messages: the relay sees two chunks
    viewer.send(response.subarray(8));
  }
  if (chosen === 2 || minor === 8) {
    const result = (await viewer.read(4)).readUInt32BE(0);
    if (result !== 0) throw new Error(`VNC authentication failed (SecurityResult ${result})`);
  }
  viewer.send([1]); // ClientInit: shared
  const init = await viewer.read(24);
  await viewer.read(init.readUInt32BE(20)); // the desktop's name
  return { width: init.readUInt16BE(0), height: init.readUInt16BE(2), securityTypes: types };
}

export const pointerEvent = (x: number, y: number, buttons = 0): number[] => [5, buttons, x >> 8, x & 255, y >> 8, y & 255];
export const keyEvent = (keysym: number, down: boolean): number[] => [4, down ? 1 : 0, 0, 0, ...u32(keysym)];
/** FramebufferUpdateRequest for one pixel (non-incremental, so the server answers at once). */
export const updateRequest = (): number[] => [3, 0, 0, 0, 0, 0, 0, 1, 0, 1];
const u32 = (n: number): number[] => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];

/** Asks for one pixel and waits for the server's FramebufferUpdate: every message sent before it has been handled. */
export async function roundTrip(viewer: RawViewer): Promise<void> {
  viewer.send(updateRequest());
  const type = (await viewer.read(1))[0];
  if (type !== 0) throw new Error(`expected a FramebufferUpdate (0), got server message ${type}`);
  // Header (3 more bytes), one rectangle header (12), one 32-bit pixel in the server's format.
  await viewer.read(3 + 12 + 4);
}
