import { open } from "node:fs/promises";

/** Bytes of one /proc/net table read at most (about 50,000 sockets); past it the count is of those read. */
const MAX_TABLE_BYTES = 8 * 1024 * 1024;
const CHUNK = 64 * 1024;
/** /proc/net/tcp's state column: 01 is ESTABLISHED. */
const ESTABLISHED = "01";

/**
 * Established TCP connections whose local port is one of `ports` (the daemon's, the SSH server's),
 * from /proc/net/tcp and tcp6: the kernel's count, whatever the server's own bookkeeping. Read off
 * the event loop in 64 KiB pieces, at most MAX_TABLE_BYTES a table; a port of 0 counts nothing.
 */
export async function establishedOn(ports: readonly number[]): Promise<number[]> {
  const counts = ports.map(() => 0);
  const wanted = new Map<string, number>();
  ports.forEach((port, i) => port > 0 && wanted.set(port.toString(16).toUpperCase().padStart(4, "0"), i));
  if (wanted.size === 0) return counts;
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      handle = await open(table, "r");
    } catch {
      continue;
    }
    try {
      const buf = Buffer.allocUnsafe(CHUNK);
      let carry = "";
      for (let read = 0; read < MAX_TABLE_BYTES; ) {
        const { bytesRead } = await handle.read(buf, 0, CHUNK, null);
        if (bytesRead === 0) break;
        read += bytesRead;
        const lines = (carry + buf.toString("latin1", 0, bytesRead)).split("\n");
        carry = lines.pop() ?? "";
        for (const line of lines) countLine(line, wanted, counts);
      }
      countLine(carry, wanted, counts);
    } finally {
      await handle.close();
    }
  }
  return counts;
}

/** "  0: 0100007F:1B9E 00000000:0000 0A …": local address:port (hex), remote, state. */
function countLine(line: string, wanted: Map<string, number>, counts: number[]): void {
  const fields = line.trim().split(/\s+/, 4);
  if (fields.length < 4 || fields[3] !== ESTABLISHED) return;
  const local = fields[1]!;
  const index = wanted.get(local.slice(local.lastIndexOf(":") + 1));
  if (index !== undefined) counts[index]!++;
}
