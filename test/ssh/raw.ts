import { createECDH, randomBytes } from "node:crypto";
import { connect, type Socket } from "node:net";

/**
 * The SSH transport as a hostile client speaks it, with no crypto of its own: the version line,
 * plaintext binary packets (RFC 4253 §6) and the first key exchange message. Such a client costs
 * next to nothing to run, while the server computes its side of the exchange in full.
 */

const uint32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};
const string = (data: Buffer | string): Buffer => Buffer.concat([uint32(Buffer.byteLength(data)), Buffer.from(data)]);
const nameList = (names: string[]): Buffer => string(names.join(","));

/** One plaintext binary packet: length, padding length, payload, padding to a multiple of 8 (at least 4 bytes). */
export function sshPacket(payload: Buffer): Buffer {
  let padding = 8 - ((5 + payload.length) % 8);
  if (padding < 4) padding += 8;
  return Buffer.concat([uint32(1 + payload.length + padding), Buffer.from([padding]), payload, Buffer.alloc(padding)]);
}

/** The algorithm lists of a KEXINIT payload (RFC 4253 §7.1). */
export interface KexInit {
  kex: string[];
  hostKey: string[];
  cipher: string[];
  mac: string[];
}

/** Reads the name-lists of a KEXINIT payload (message 20). */
export function parseKexInit(payload: Buffer): KexInit {
  if (payload[0] !== 20) throw new Error(`not a KEXINIT: message ${payload[0]}`);
  let at = 17;
  const lists: string[][] = [];
  for (let i = 0; i < 10; i++) {
    const len = payload.readUInt32BE(at);
    lists.push(
      payload
        .subarray(at + 4, at + 4 + len)
        .toString()
        .split(",")
        .filter(Boolean),
    );
    at += 4 + len;
  }
  return { kex: lists[0]!, hostKey: lists[1]!, cipher: lists[2]!, mac: lists[4]! };
}

/** Key exchange methods by what they cost the server, dearest first: what an attacker would pick. */
export const KEX_BY_COST = [
  "diffie-hellman-group18-sha512",
  "diffie-hellman-group-exchange-sha256",
  "diffie-hellman-group17-sha512",
  "diffie-hellman-group16-sha512",
  "diffie-hellman-group15-sha512",
  "diffie-hellman-group14-sha256",
  "diffie-hellman-group14-sha1",
  "diffie-hellman-group-exchange-sha1",
  "diffie-hellman-group1-sha1",
  "ecdh-sha2-nistp521",
  "ecdh-sha2-nistp384",
  "ecdh-sha2-nistp256",
  "curve25519-sha256",
  "curve25519-sha256@libssh.org",
];

const ECDH_CURVES: Record<string, string> = {
  "ecdh-sha2-nistp256": "prime256v1",
  "ecdh-sha2-nistp384": "secp384r1",
  "ecdh-sha2-nistp521": "secp521r1",
};
const ecdhPoints = new Map<string, Buffer>();

/** The client's first key exchange message for `kex`: a public value the server must do its full work for. */
function firstKexMessage(kex: string): Buffer {
  if (kex.startsWith("curve25519")) return Buffer.concat([Buffer.from([30]), string(randomBytes(32))]);
  const curve = ECDH_CURVES[kex];
  if (curve) {
    let point = ecdhPoints.get(curve);
    if (!point) {
      const ecdh = createECDH(curve);
      point = ecdh.generateKeys();
      ecdhPoints.set(curve, point);
    }
    return Buffer.concat([Buffer.from([30]), string(point)]);
  }
  // Group exchange: ask for the largest group (min, preferred, max bits).
  if (kex.startsWith("diffie-hellman-group-exchange")) return Buffer.concat([Buffer.from([34]), uint32(2048), uint32(8192), uint32(8192)]);
  return Buffer.concat([Buffer.from([30]), string(Buffer.from([2]))]); // e = 2: as costly for the server as any e
}

/** A raw connection: what the server sent (its version line, then plaintext packets), and a way to send. */
export class RawSsh {
  readonly socket: Socket;
  serverIdent = "";
  private buffered = Buffer.alloc(0);
  private waiting: (() => void) | undefined;
  closed = false;
  /** The server has ended its side (sent FIN). */
  private serverEnd: Promise<void>;

  /** `allowHalfOpen`: keep sending after the server has ended its side (as a hostile client may). */
  constructor(port: number, host = "127.0.0.1", options: { allowHalfOpen?: boolean } = {}) {
    this.socket = connect({ port, host, allowHalfOpen: options.allowHalfOpen ?? false });
    this.socket.on("error", () => {});
    this.serverEnd = new Promise((resolve) => {
      this.socket.once("end", () => resolve());
      this.socket.once("close", () => resolve());
    });
    this.socket.on("data", (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      this.waiting?.();
    });
    this.socket.on("close", () => {
      this.closed = true;
      this.waiting?.();
    });
  }

  /** Resolves once the server has ended its side (or the socket closed). */
  serverEnded(): Promise<void> {
    return this.serverEnd;
  }

  /** Resolves once the socket has closed (either side). */
  ended(): Promise<void> {
    return new Promise((resolve) => (this.closed ? resolve() : this.socket.once("close", () => resolve())));
  }

  private async until<T>(take: () => T | undefined): Promise<T> {
    for (;;) {
      const got = take();
      if (got !== undefined) return got;
      if (this.closed) throw new Error("the server closed the connection");
      await new Promise<void>((resolve) => (this.waiting = resolve));
      this.waiting = undefined;
    }
  }

  /** The server's version line (without CR LF). */
  async ident(): Promise<string> {
    this.serverIdent = await this.until(() => {
      const end = this.buffered.indexOf("\r\n");
      if (end < 0) return undefined;
      const line = this.buffered.subarray(0, end).toString();
      this.buffered = this.buffered.subarray(end + 2);
      return line;
    });
    return this.serverIdent;
  }

  /** The next plaintext packet's payload. */
  packet(): Promise<Buffer> {
    return this.until(() => {
      if (this.buffered.length < 4) return undefined;
      const len = this.buffered.readUInt32BE(0);
      if (this.buffered.length < 4 + len) return undefined;
      const padding = this.buffered[4]!;
      const payload = this.buffered.subarray(5, 4 + len - padding);
      this.buffered = this.buffered.subarray(4 + len);
      return payload;
    });
  }

  /**
   * Resolves once the server has closed the connection for good. A half-open client learns that
   * only by writing (the reset answers a write), so this writes a byte every 100 ms until then.
   */
  async closedByServer(): Promise<void> {
    while (!this.closed) {
      if (this.socket.writable) this.socket.write("x");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  send(data: Buffer | string): void {
    this.socket.write(data);
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** A client's KEXINIT offering exactly `kex` and the server's first choice of everything else. */
function clientKexInit(kex: string, server: KexInit): Buffer {
  return Buffer.concat([
    Buffer.from([20]),
    randomBytes(16),
    nameList([kex]),
    nameList([server.hostKey[0]!]),
    nameList([server.cipher[0]!]),
    nameList([server.cipher[0]!]),
    nameList([server.mac[0] ?? "hmac-sha2-256"]),
    nameList([server.mac[0] ?? "hmac-sha2-256"]),
    nameList(["none"]),
    nameList(["none"]),
    nameList([]),
    nameList([]),
    Buffer.from([0]),
    uint32(0),
  ]);
}

/** What the server offers, read from a connection of its own that then closes. */
export async function serverOffer(port: number): Promise<KexInit & { ident: string }> {
  const raw = new RawSsh(port);
  try {
    raw.send("SSH-2.0-probe\r\n");
    const ident = await raw.ident();
    return { ...parseKexInit(await raw.packet()), ident };
  } finally {
    raw.destroy();
  }
}

/**
 * One bare key exchange as an attacker runs it: the dearest method the server offers (or the first of `methods`), a public
 * value that costs the client nothing, and away as soon as the server has answered (its part of
 * the exchange is done by then). Resolves with the method, or rejects if the server closed first.
 */
export async function bareKeyExchange(port: number, methods: string[] = KEX_BY_COST): Promise<string> {
  const raw = new RawSsh(port);
  try {
    raw.send("SSH-2.0-x\r\n");
    await raw.ident();
    const offer = parseKexInit(await raw.packet());
    const kex = methods.find((k) => offer.kex.includes(k));
    if (!kex) throw new Error(`no known key exchange among ${offer.kex.join(",")}`);
    raw.send(Buffer.concat([sshPacket(clientKexInit(kex, offer)), sshPacket(firstKexMessage(kex))]));
    let reply = await raw.packet();
    if (kex.startsWith("diffie-hellman-group-exchange") && reply[0] === 31) {
      raw.send(sshPacket(Buffer.concat([Buffer.from([32]), string(Buffer.from([2]))])));
      reply = await raw.packet();
    }
    if (reply[0] !== 31 && reply[0] !== 33) throw new Error(`unexpected reply to the key exchange: message ${reply[0]}`);
    return kex;
  } finally {
    raw.destroy();
  }
}
