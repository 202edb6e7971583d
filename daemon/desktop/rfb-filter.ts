/**
 * What a view-only viewer may send a VNC server: the RFB handshake (RFC 6143 §7.1–7.3) and the
 * client messages that ask for pixels. Key and pointer events, clipboard, screen resizing and
 * power or QEMU input messages are dropped; a message it cannot size ends the stream (fail closed).
 */
export class ObserveFilter {
  private pending: Buffer = Buffer.alloc(0);
  private state: "version" | "security" | "vncauth" | "init" | "messages" = "version";
  private skip = 0;

  /** The bytes of `chunk` that may reach the server; throws when the stream cannot be followed. */
  filter(chunk: Buffer): Buffer {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    const out: Buffer[] = [];
    for (;;) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, this.pending.length);
        this.skip -= n;
        this.pending = this.pending.subarray(n);
      }
      const size = this.nextSize();
      if (size === undefined || this.pending.length < size.length) break;
      const unit = this.pending.subarray(0, size.length);
      this.pending = this.pending.subarray(size.length);
      if (size.shared) unit[0] = 1; // ClientInit: always shared, so a viewer never disconnects the others
      if (size.pass) out.push(unit);
      this.skip = size.skip ?? 0;
    }
    if (this.pending.length > 1 << 20) throw new Error("an RFB client message over 1 MiB");
    return out.length === 1 ? out[0]! : Buffer.concat(out);
  }

  /** The size of the next unit and whether it passes; undefined until enough bytes to tell. */
  private nextSize(): { length: number; pass: boolean; skip?: number; shared?: true } | undefined {
    const p = this.pending;
    switch (this.state) {
      case "version":
        if (p.length < 12) return undefined;
        // RFB 3.3 has the server choose the security type: no byte of the client's follows.
        this.state = p.subarray(0, 12).toString("latin1") === "RFB 003.003\n" ? "init" : "security";
        return { length: 12, pass: true };
      case "security":
        if (p.length < 1) return undefined;
        if (p[0] === 1) this.state = "init";
        else if (p[0] === 2) this.state = "vncauth";
        else throw new Error(`RFB security type ${p[0]} is not one a view-only relay follows (None or VNC authentication)`);
        return { length: 1, pass: true };
      case "vncauth":
        this.state = "init";
        return { length: 16, pass: true };
      case "init":
        if (p.length < 1) return undefined;
        this.state = "messages";
        return { length: 1, pass: true, shared: true };
      case "messages":
        return p.length < 1 ? undefined : messageSize(p);
    }
  }
}

function messageSize(p: Buffer): { length: number; pass: boolean; skip?: number } | undefined {
  const need = (n: number): boolean => p.length >= n;
  switch (p[0]) {
    case 0: // SetPixelFormat
      return { length: 20, pass: true };
    case 2: // SetEncodings
      return need(4) ? { length: 4 + 4 * p.readUInt16BE(2), pass: true } : undefined;
    case 3: // FramebufferUpdateRequest
      return { length: 10, pass: true };
    case 4: // KeyEvent
      return { length: 8, pass: false };
    case 5: // PointerEvent
      return { length: 6, pass: false };
    case 6: // ClientCutText (a negative length is the extended clipboard's)
      return need(8) ? { length: 8, pass: false, skip: Math.abs(p.readInt32BE(4)) } : undefined;
    case 150: // EnableContinuousUpdates
      return { length: 10, pass: true };
    case 248: // ClientFence
      return need(9) ? { length: 9 + p[8]!, pass: true } : undefined;
    case 250: // xvp (shutdown, reboot)
      return { length: 4, pass: false };
    case 251: // SetDesktopSize
      return need(8) ? { length: 8 + 16 * p[6]!, pass: false } : undefined;
    case 255: // QEMU: extended key event
      if (!need(2)) return undefined;
      if (p[1] === 0) return { length: 12, pass: false };
      throw new Error(`QEMU client message ${p[1]} is not one a view-only relay follows`);
    default:
      throw new Error(`RFB client message type ${p[0]} is not one a view-only relay follows`);
  }
}
