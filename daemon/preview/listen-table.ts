import { readFile } from "node:fs/promises";

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

/** The listening sockets of one table's text (`family` says which table it was). */
export function parseListenTable(text: string, family: "ipv4" | "ipv6"): ListenEntry[] {
  const out: ListenEntry[] = [];
  for (const line of text.split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10 || f[3] !== LISTEN) continue;
    const [addr, portHex] = f[1]!.split(":");
    if (!addr || !portHex) continue;
    out.push({ port: Number.parseInt(portHex, 16), address: family === "ipv4" ? ipv4(addr) : ipv6(addr), family, inode: f[9]! });
  }
  return out;
}

async function readTable(path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch {
    return ""; // no IPv6 (or no /proc): nothing listens there
  }
}

/** Every listening TCP socket of the daemon's network namespace (which is its jobs'), by port. */
export async function readListenTable(): Promise<ListenEntry[]> {
  const [v4, v6] = await Promise.all([readTable("/proc/net/tcp"), readTable("/proc/net/tcp6")]);
  return [...parseListenTable(v4, "ipv4"), ...parseListenTable(v6, "ipv6")].sort(
    (a, b) => a.port - b.port || a.family.localeCompare(b.family),
  );
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
