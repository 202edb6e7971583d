import { type FileHandle, open } from "node:fs/promises";

/** One listening TCP socket as /proc/net/tcp{,6} shows it. */
export interface ListenEntry {
  port: number;
  address: string;
  family: "ipv4" | "ipv6";
  /** The socket's inode: the key to the process holding it (/proc/<pid>/fd → socket:[inode]). */
  inode: string;
}

/** TCP_LISTEN in include/net/tcp_states.h, as the tables print it. */
const LISTEN = "0A";

/** An IPv4 address as the table writes it: one 32-bit word in host (little-endian) order. */
function ipv4(hex: string): string {
  const n = Number.parseInt(hex, 16);
  return [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, n >>> 24].join(".");
}

/** An IPv6 address: four 32-bit words, each in host order; printed compressed (`::1`, `::`). */
function ipv6(hex: string): string {
  const bytes: number[] = [];
  for (let w = 0; w < 4; w++) {
    const word = hex.slice(w * 8, w * 8 + 8);
    for (let b = 3; b >= 0; b--) bytes.push(Number.parseInt(word.slice(b * 2, b * 2 + 2), 16));
  }
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) return `::ffff:${bytes.slice(12).join(".")}`;
  const groups = Array.from({ length: 8 }, (_, i) => ((bytes[i * 2]! << 8) | bytes[i * 2 + 1]!).toString(16));
  // The longest run of zero groups becomes "::" (RFC 5952).
  let best = { at: -1, len: 0 };
  for (let i = 0; i < 8; ) {
    if (groups[i] !== "0") {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === "0") j++;
    if (j - i > best.len && j - i > 1) best = { at: i, len: j - i };
    i = j;
  }
  if (best.at < 0) return groups.join(":");
  return `${groups.slice(0, best.at).join(":")}::${groups.slice(best.at + best.len).join(":")}`;
}

/**
 * One row of a table: `sl: local rem st tx:rx tr:when retrnsmt uid timeout inode`. Only the rows'
 * state, local address and inode are read.
 */
const ROW = /^ *\d+: ([0-9A-F]+):([0-9A-F]{4}) [0-9A-F]+:[0-9A-F]{4} ([0-9A-F]{2}) (?:\S+ +){5}(\d+)/;

/**
 * The listening sockets among a table's rows; `done` once a row in another state is seen. The
 * kernel prints a table's listening hash before its established one (tcp_seq_start in
 * net/ipv4/tcp_ipv4.c, for tcp6 too), so every listener comes before the first other row: with
 * 40,000 connections open, the listeners are in the table's first page.
 */
export function parseListenRows(text: string, family: "ipv4" | "ipv6"): { entries: ListenEntry[]; done: boolean } {
  const entries: ListenEntry[] = [];
  for (const line of text.split("\n")) {
    const m = ROW.exec(line);
    if (!m) continue; // the header, or an empty line
    if (m[3] !== LISTEN) return { entries, done: true };
    entries.push({ port: Number.parseInt(m[2]!, 16), address: family === "ipv4" ? ipv4(m[1]!) : ipv6(m[1]!), family, inode: m[4]! });
  }
  return { entries, done: false };
}

/** What one read of a table takes (a turn parses at most this much). */
const SLICE_BYTES = 64 * 1024;

/**
 * One table's listeners, read a slice at a time (each read on the thread pool, each slice parsed in
 * a turn of its own) and no further than its last listener.
 */
async function readListeners(path: string, family: "ipv4" | "ipv6"): Promise<ListenEntry[]> {
  let file: FileHandle;
  try {
    file = await open(path, "r");
  } catch {
    return []; // no IPv6 (or no /proc): nothing listens there
  }
  const entries: ListenEntry[] = [];
  try {
    const buffer = Buffer.allocUnsafe(SLICE_BYTES);
    let partial = "";
    for (;;) {
      const { bytesRead } = await file.read(buffer, 0, SLICE_BYTES, null);
      if (bytesRead === 0) break;
      const text = partial + buffer.toString("latin1", 0, bytesRead);
      const cut = text.lastIndexOf("\n") + 1;
      partial = text.slice(cut);
      const rows = parseListenRows(text.slice(0, cut), family);
      entries.push(...rows.entries);
      if (rows.done) return entries;
    }
    entries.push(...parseListenRows(partial, family).entries);
    return entries;
  } catch {
    return entries;
  } finally {
    await file.close().catch(() => {});
  }
}

/** Every listening TCP socket of the daemon's network namespace (which is its jobs'), by port. */
export async function readListenTable(): Promise<ListenEntry[]> {
  const [v4, v6] = await Promise.all([readListeners("/proc/net/tcp", "ipv4"), readListeners("/proc/net/tcp6", "ipv6")]);
  return [...v4, ...v6].sort((a, b) => a.port - b.port || a.family.localeCompare(b.family));
}

/**
 * The loopback address the daemon reaches a listener at: a wildcard or loopback bind on IPv4 first
 * (most dev servers), then IPv6 (Vite on `localhost` may bind `::1` alone), else the bound address.
 */
export function connectAddress(entries: readonly ListenEntry[]): string | undefined {
  const v4 = entries.find((e) => e.family === "ipv4" && (e.address === "0.0.0.0" || e.address.startsWith("127.")));
  if (v4) return v4.address === "0.0.0.0" ? "127.0.0.1" : v4.address;
  if (entries.some((e) => e.family === "ipv6" && (e.address === "::" || e.address === "::1"))) return "::1";
  return entries[0]?.address;
}
