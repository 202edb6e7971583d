/**
 * What a view-only viewer may send a VNC server: the RFB handshake (RFC 6143 §7.1–7.3) and the
 * client messages that ask for pixels. Key and pointer events, clipboard, screen resizing and
 * power or QEMU input messages are dropped; a message it cannot size ends the stream (fail closed).
 *
 * The filter must read the client's bytes exactly as the server does, or a viewer could make it
 * take a PointerEvent for handshake bytes. So it decides the version itself: the client's greeting
 * is checked, read the way servers read it (3.3, 3.7 or 3.8), capped at the server's, and sent on
 * as that canonical string; and it watches the server's first bytes for its greeting and, in RFB
 * 3.3, the security type the server chose. Client bytes wait here until the server has said what
 * the filter needs to know.
 */
export class ObserveFilter {
  private pending: Buffer = EMPTY;
  private state: Phase = "version";
  private skip = 0;
  /** The server's greeting and, in RFB 3.3, its security type: the only server bytes read (16 at most). */
  private server: Buffer = EMPTY;
  /** The server's version as a minor number (3, 7 or 8), once its greeting arrived. */
  private serverMinor: number | undefined;
  /** The version the session speaks (3, 7 or 8), once the client's greeting went through. */
  private minor: number | undefined;

  /** The bytes of `chunk` that may reach the server; throws when the stream cannot be followed. */
  filter(chunk: Buffer): Buffer {
    if (chunk.length) this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    const out: Buffer[] = [];
    for (;;) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, this.pending.length);
        this.skip -= n;
        this.pending = this.pending.subarray(n);
      }
      const unit = this.nextUnit();
      if (unit === undefined) break;
      const bytes = this.pending.subarray(0, unit.length);
      this.pending = this.pending.subarray(unit.length);
      if (unit.next) this.state = unit.next;
      if (unit.pass) out.push(unit.replace ?? bytes);
      this.skip = unit.skip ?? 0;
    }
    if (this.pending.length > 1 << 20) throw new Error("an RFB client message over 1 MiB");
    return out.length === 1 ? out[0]! : Buffer.concat(out);
  }

  /** Reads what the server sent (its bytes pass unchanged); returns client bytes that may now go on. */
  fromServer(chunk: Buffer): Buffer {
    if (this.server.length < 16) {
      this.server = Buffer.concat([this.server, chunk.subarray(0, 16 - this.server.length)]);
      if (this.serverMinor === undefined && this.server.length >= 12) this.serverMinor = serverVersion(this.server.subarray(0, 12));
    }
    // Only the handshake's first steps wait for the server; later, its bytes change nothing here.
    const waiting = this.state === "version" || this.state === "security";
    return waiting && this.pending.length ? this.filter(EMPTY) : EMPTY;
  }

  /**
   * The next whole unit at the head of `pending` and what it does, or undefined until it has all
   * arrived (and, in the handshake, until the server said what decides its reading). `next` is the
   * state after it; a unit of length 0 always has one, so the loop moves on.
   */
  private nextUnit(): Unit | undefined {
    const p = this.pending;
    switch (this.state) {
      case "version": {
        if (p.length < 12 || this.serverMinor === undefined) return undefined;
        this.minor = Math.min(this.serverMinor, clientVersion(p.subarray(0, 12)));
        return { length: 12, pass: true, replace: Buffer.from(`RFB 003.00${this.minor}\n`, "latin1"), next: "security" };
      }
      case "security": {
        // RFB 3.3: the server chose the type and the client sends no byte for it (RFC 6143 Appendix A).
        const type = this.minor === 3 ? (this.server.length >= 16 ? this.server.readUInt32BE(12) : undefined) : p[0];
        if (type === undefined || (this.minor === 3 && type === 0)) return undefined; // 0: refused, the server closes
        if (type !== 1 && type !== 2)
          throw new Error(`RFB security type ${type} is not one a view-only relay follows (None or VNC authentication)`);
        return { length: this.minor === 3 ? 0 : 1, pass: true, next: type === 1 ? "init" : "vncauth" };
      }
      case "vncauth": // the 16-byte DES response to the server's challenge
        return p.length < 16 ? undefined : { length: 16, pass: true, next: "init" };
      case "init": // ClientInit: always shared, so a viewer never disconnects the others
        return p.length < 1 ? undefined : { length: 1, pass: true, replace: SHARED, next: "messages" };
      case "messages":
        return p.length < 1 ? undefined : messageSize(p);
    }
  }
}

/** Where the viewer's stream is: the handshake's steps, then client messages. */
type Phase = "version" | "security" | "vncauth" | "init" | "messages";

interface Unit {
  length: number;
  pass: boolean;
  skip?: number;
  replace?: Buffer;
  next?: Phase;
}

const EMPTY = Buffer.alloc(0);
const SHARED = Buffer.from([1]);

/** A greeting's major and minor numbers; throws unless it is exactly `RFB xxx.yyy\n`. */
function greeting(bytes: Buffer, who: string): { major: number; minor: number } {
  const m = /^RFB (\d{3})\.(\d{3})\n$/.exec(bytes.toString("latin1"));
  if (!m) throw new Error(`the ${who}'s RFB greeting ${JSON.stringify(bytes.toString("latin1"))} is not one a view-only relay follows`);
  return { major: Number(m[1]), minor: Number(m[2]) };
}

/**
 * How servers read a client's version (TigerVNC, libvncserver; RFC 6143 §7.1.1 "other versions
 * … should be interpreted as 3.3"): 3.7 is 3.7, above it 3.8, anything else 3.3.
 */
function clientVersion(bytes: Buffer): number {
  const { major, minor } = greeting(bytes, "viewer");
  if (major !== 3) throw new Error(`RFB ${major}.${minor} is not a version a VNC server speaks with a viewer`);
  return minor === 7 ? 7 : minor > 7 ? 8 : 3;
}

/** The highest version a server offers (3.889 of Apple's and RealVNC's 4.x and 5.x speak 3.8). */
function serverVersion(bytes: Buffer): number {
  const { major, minor } = greeting(bytes, "server");
  if (major > 3) return 8;
  if (major < 3) throw new Error(`the VNC server speaks RFB ${major}.${minor}`);
  return minor === 7 ? 7 : minor > 7 ? 8 : 3;
}

function messageSize(p: Buffer): Unit | undefined {
  const need = (n: number): boolean => p.length >= n;
  switch (p[0]) {
    case 0: // SetPixelFormat
      return need(20) ? { length: 20, pass: true } : undefined;
    case 2: // SetEncodings
      return need(4) && need(4 + 4 * p.readUInt16BE(2)) ? { length: 4 + 4 * p.readUInt16BE(2), pass: true } : undefined;
    case 3: // FramebufferUpdateRequest
      return need(10) ? { length: 10, pass: true } : undefined;
    case 4: // KeyEvent
      return need(8) ? { length: 8, pass: false } : undefined;
    case 5: // PointerEvent
      return need(6) ? { length: 6, pass: false } : undefined;
    case 6: // ClientCutText (a negative length is the extended clipboard's)
      return need(8) ? { length: 8, pass: false, skip: Math.abs(p.readInt32BE(4)) } : undefined;
    case 150: // EnableContinuousUpdates
      return need(10) ? { length: 10, pass: true } : undefined;
    case 248: // ClientFence
      return need(9) && need(9 + p[8]!) ? { length: 9 + p[8]!, pass: true } : undefined;
    case 250: // xvp (shutdown, reboot)
      return need(4) ? { length: 4, pass: false } : undefined;
    case 251: // SetDesktopSize
      return need(8) && need(8 + 16 * p[6]!) ? { length: 8 + 16 * p[6]!, pass: false } : undefined;
    case 255: // QEMU: extended key event
      if (!need(2)) return undefined;
      if (p[1] === 0) return need(12) ? { length: 12, pass: false } : undefined;
      throw new Error(`QEMU client message ${p[1]} is not one a view-only relay follows`);
    default:
      throw new Error(`RFB client message type ${p[0]} is not one a view-only relay follows`);
  }
}
