import { resolve } from "node:path";
import type { FileEntry } from "../../protocol/actions/files-fs.js";
import type { Connection } from "../../client/connection.js";
import type { Command } from "../command.js";
import { printResult } from "./print.js";

/** `hotline cat`, `put`, `ls`, `grep`: the filesystem actions from a terminal, byte-exact. */

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

/** Writes to stdout, waiting for it to drain so a large file never piles up in memory. */
function writeOut(bytes: Buffer): Promise<void> {
  return new Promise((done) => (process.stdout.write(bytes) ? done() : process.stdout.once("drain", done)));
}

export interface ReadReply {
  data: string;
  encoding: string;
  offset: number;
  next: number;
  size: number;
  eof: boolean;
  sha256?: string;
  /** The slice's bytes, decoded (or raw, from the binary frame). */
  bytes: Buffer;
}

/** The protocol's file limits, imported by the verbs that use them: the module brings TypeBox, which other verbs need not load. */
const fileLimits = () => import("../../protocol/actions/files-fs.js");

/**
 * The replies of files.read for a whole file, in order, with `depth` requests in flight: the
 * next offsets are guessed as offset + limit, and a guess is dropped and re-asked when a reply
 * was cut short (text cut at a character boundary). Pipelining lets the daemon read and encode
 * while this side decodes; one request at a time would leave each side idle half the time.
 * With `binary`, the bytes come raw in the binary frame that follows each reply.
 */
export async function* readSlices(
  connection: Connection,
  path: string,
  options: { limit?: number; depth?: number; binary?: boolean } = {},
): AsyncGenerator<ReadReply> {
  const limit = options.limit ?? (await fileLimits()).FILE_READ_MAX_LIMIT;
  const depth = options.depth ?? 3;
  const frames = new Map<number, Buffer>();
  const arrived = new Map<number, (bytes: Buffer) => void>();
  const off = connection.onFrame((frame) => {
    if (frame.event !== "files.data") return;
    const offset = frame.offset as number;
    const bytes = frame.bytes as Buffer;
    const waiter = arrived.get(offset);
    if (waiter) waiter(bytes);
    else frames.set(offset, bytes);
  });
  const bytesAt = (offset: number): Promise<Buffer> => {
    const ready = frames.get(offset);
    frames.delete(offset);
    return ready ? Promise.resolve(ready) : new Promise((resolve) => arrived.set(offset, resolve));
  };
  const ask = (offset: number) => ({
    offset,
    reply: connection.request("files.read", { path, offset, limit, ...(options.binary ? { binary: true } : {}) }) as Promise<ReadReply>,
  });
  let queue = [ask(0)];
  let want = 0;
  try {
    while (queue.length > 0) {
      const head = queue.shift()!;
      const r = await head.reply;
      const bytes = r.encoding === "binary" ? await bytesAt(r.offset) : Buffer.from(r.data, r.encoding === "base64" ? "base64" : "utf8");
      arrived.delete(r.offset);
      if (head.offset !== want) continue; // a guess made stale by a short reply before it
      yield { ...r, bytes };
      if (r.eof) break;
      want = r.next;
      if (r.next !== head.offset + limit) {
        for (const stale of queue) stale.reply.catch(() => undefined);
        queue = [];
      }
      let guess = queue.length ? queue[queue.length - 1]!.offset + limit : want;
      while (queue.length < depth && guess < r.size) {
        queue.push(ask(guess));
        guess += limit;
      }
    }
  } finally {
    off();
  }
}

const cat: Command = async ({ client, args }) => {
  if (args.length === 0) throw new Error("usage: hotline cat FILE…");
  for (const arg of args) {
    for await (const r of readSlices(await client.ready(), resolve(arg), { binary: true })) await writeOut(r.bytes);
  }
  return 0;
};

/** Chunks of stdin of exactly `size` bytes (the last one shorter), so the final one can be sent as final. */
async function* stdinChunks(size: number): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  let length = 0;
  for await (const data of process.stdin as AsyncIterable<Buffer>) {
    pending.push(data);
    length += data.length;
    while (length > size) {
      const all = Buffer.concat(pending);
      yield all.subarray(0, size);
      pending = [all.subarray(size)];
      length -= size;
    }
  }
  yield Buffer.concat(pending);
}

const put: Command = async ({ client, args, flags, json }) => {
  if (args.length !== 1) throw new Error("usage: hotline put FILE < content [--if-match SHA256|absent] [--mode 0644] [--parents]");
  const path = resolve(args[0]!);
  const first: Record<string, unknown> = {};
  if (str(flags["if-match"])) first.ifMatch = flags["if-match"];
  if (str(flags.mode)) first.mode = flags.mode;
  if (flags.parents === true) first.parents = true;
  const chunks = stdinChunks((await fileLimits()).FILE_WRITE_CHUNK_BYTES);
  let current = (await chunks.next()).value as Buffer;
  let upload: string | undefined;
  let offset = 0;
  for (;;) {
    const next = await chunks.next();
    const final = next.done === true;
    const params = { path, data: current.toString("base64"), encoding: "base64", final, ...(upload ? { upload, offset } : first) };
    const reply = await client.request<{ upload?: string; size?: number; sha256?: string; path: string }>("files.write", params);
    if (final) {
      printResult(reply, json, (reply) => `${reply.path}  ${reply.size} bytes  sha256 ${reply.sha256}`);
      return 0;
    }
    upload = reply.upload;
    offset += current.length;
    current = next.value as Buffer;
  }
};

function entryLine(e: FileEntry): string {
  return `${e.type.padEnd(9)} ${e.mode} ${String(e.size).padStart(10)}  ${e.path}${e.target !== undefined ? ` -> ${e.target}` : ""}`;
}

const ls: Command = async ({ client, args, flags, json }) => {
  const params: Record<string, unknown> = { path: resolve(args[0] ?? ".") };
  if (str(flags.depth)) params.depth = Number(flags.depth);
  if (str(flags.glob)) params.glob = flags.glob;
  if (str(flags.limit)) params.limit = Number(flags.limit);
  if (flags.hidden === true) params.hidden = true;
  if (flags.gitignore === true) params.gitignore = true;
  const r = await client.request<{ entries: FileEntry[]; more: boolean }>("files.list", params);
  printResult(r, json, (r) => [...r.entries.map(entryLine), ...(r.more ? ["… more (raise --limit)"] : [])].join("\n"));
  return 0;
};

const grep: Command = async ({ client, args, flags, json }) => {
  if (args.length < 1 || args.length > 2) throw new Error("usage: hotline grep PATTERN [PATH] [--regex] [--glob G] [--limit N]");
  const params: Record<string, unknown> = { pattern: args[0], path: resolve(args[1] ?? ".") };
  if (flags.regex === true) params.regex = true;
  if (str(flags.glob)) params.glob = flags.glob;
  if (str(flags.limit)) params.maxResults = Number(flags.limit);
  const r = await client.request<{
    matches: Array<{ path: string; line: number; column: number; text: string }>;
    more: boolean;
    timedOut: boolean;
  }>("files.search", params);
  const tail = r.timedOut ? ["… stopped after 10 s"] : r.more ? ["… more (raise --limit)"] : [];
  printResult(r, json, (r) => [...r.matches.map((m) => `${m.path}:${m.line}:${m.column}:${m.text}`), ...tail].join("\n"));
  return r.matches.length > 0 ? 0 : 1;
};

export const fsCommands: Record<string, Command> = { cat, put, ls, grep };
