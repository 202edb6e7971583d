import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { linkSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";

/** The exit code of a daemon refused because another one holds the state directory. */
export const ALREADY_RUNNING_EXIT_CODE = 3;

/** What the holder tells a second daemon that asks, once it has proven it holds the state directory's key. */
export interface LockHolder {
  pid: number;
  url: string | null;
}

/** `squatted`: the lock's name was held by a process that could not prove it is this directory's daemon; the lock moved to a new name. */
export type LockResult = { ok: true; lock: InstanceLock; squatted: boolean } | { ok: false; holder: LockHolder };

const ASK_TIMEOUT_MS = 5000;
const MAX_LINE = 512;
const KEY_PREFIX = "instance-key.";

/**
 * The single-instance lock of a state directory: a Linux abstract-namespace unix socket. Binding
 * is atomic, fails with EADDRINUSE while another process holds the name, and the kernel frees the
 * name the moment the holder dies (even by SIGKILL), so no stale lock is ever left to clean up.
 *
 * Abstract names have no owner or permissions: any user can bind one, and all are listed in
 * /proc/net/unix. So the name is derived from a random key kept in the 0700 state directory
 * (`instance-key.<generation>`, mode 0600), and a holder is believed only when it answers a random
 * challenge with an HMAC under that key. A name held by anyone who cannot (another user who saw
 * the name while the daemon ran) is abandoned: a new key generation is created (atomically, by
 * link, so two daemons starting at once agree on it) and the lock is taken under its name. Nothing
 * an unproven holder says is shown.
 */
export class InstanceLock {
  private url: string | null = null;

  private constructor(
    private readonly server: Server,
    private readonly key: Buffer,
  ) {
    server.on("connection", (socket) => this.answer(socket));
    // The lock must never keep the process alive on its own.
    server.unref();
  }

  /** Takes the lock, or reports who holds it (only a holder that proved it has the key). */
  static async acquire(stateDir: string): Promise<LockResult> {
    const realDir = realpathSync(stateDir);
    let squatted = false;
    for (let attempt = 0; attempt < 8; attempt++) {
      const { generation, key } = currentKey(realDir);
      const name = nameFor(realDir, key);
      const server = await listen(name);
      if (server) {
        removeOlderKeys(realDir, generation);
        return { ok: true, lock: new InstanceLock(server, key), squatted };
      }
      const holder = await askHolder(name, key);
      if (holder) return { ok: false, holder };
      squatted = true;
      createKey(realDir, generation + 1); // another daemon may have done it first: either way, try the newest
    }
    throw new Error(`cannot take the instance lock of ${stateDir}: every name tried was held by a process that is not its daemon`);
  }

  /** Publishes the daemon's URL to later askers once it listens. */
  setUrl(url: string): void {
    this.url = url;
  }

  release(): void {
    this.server.close();
  }

  /** One asker: reads its challenge line, answers with who we are and the proof, and ends. */
  private answer(socket: Socket): void {
    let text = "";
    socket.setTimeout(ASK_TIMEOUT_MS, () => socket.destroy());
    socket.on("error", () => socket.destroy());
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      text += chunk;
      const end = text.indexOf("\n");
      if (end < 0) {
        if (text.length > MAX_LINE) socket.destroy();
        return;
      }
      const nonce = /^[0-9a-f]{64}$/.test(text.slice(0, end)) ? text.slice(0, end) : undefined;
      if (!nonce) return void socket.destroy();
      socket.end(`${JSON.stringify({ pid: process.pid, url: this.url, proof: proof(this.key, nonce) })}\n`);
    });
  }
}

function proof(key: Buffer, nonce: string): string {
  return createHmac("sha256", key).update(`hotline-instance-lock:${nonce}`).digest("hex");
}

function nameFor(realDir: string, key: Buffer): string {
  return `\0hotline-${createHash("sha256").update(key).update(realDir).digest("hex")}`;
}

/** Binds the name; undefined when another process holds it. */
function listen(name: string): Promise<Server | undefined> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", (err: NodeJS.ErrnoException) => (err.code === "EADDRINUSE" ? resolve(undefined) : reject(err)));
    server.listen({ path: name }, () => resolve(server));
  });
}

function keyGenerations(realDir: string): number[] {
  return readdirSync(realDir)
    .filter((name) => name.startsWith(KEY_PREFIX) && /^\d+$/.test(name.slice(KEY_PREFIX.length)))
    .map((name) => Number(name.slice(KEY_PREFIX.length)));
}

/** The newest key generation, made when there is none. A key file not ours, or readable by others, is never trusted. */
function currentKey(realDir: string): { generation: number; key: Buffer } {
  let generation = Math.max(0, ...keyGenerations(realDir));
  if (generation === 0) {
    createKey(realDir, 1);
    generation = Math.max(1, ...keyGenerations(realDir));
  }
  const path = join(realDir, `${KEY_PREFIX}${generation}`);
  const stat = statSync(path);
  if (stat.uid !== process.getuid?.() || (stat.mode & 0o077) !== 0)
    throw new Error(`${path} is not this user's private file (owner uid ${stat.uid}, mode ${(stat.mode & 0o777).toString(8)}); remove it`);
  const key = Buffer.from(readFileSync(path, "utf8").trim(), "hex");
  if (key.length !== 32) throw new Error(`${path} does not hold a 32-byte hex key; remove it`);
  return { generation, key };
}

/** Creates key generation `generation` whole or not at all (written aside, then linked: EEXIST means another daemon made it). */
function createKey(realDir: string, generation: number): void {
  const temp = join(realDir, `.${KEY_PREFIX}${generation}.${process.pid}.${randomBytes(4).toString("hex")}`);
  writeFileSync(temp, `${randomBytes(32).toString("hex")}\n`, { mode: 0o600, flag: "wx" });
  try {
    linkSync(temp, join(realDir, `${KEY_PREFIX}${generation}`));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  } finally {
    rmSync(temp, { force: true });
  }
}

function removeOlderKeys(realDir: string, current: number): void {
  for (const generation of keyGenerations(realDir))
    if (generation < current) rmSync(join(realDir, `${KEY_PREFIX}${generation}`), { force: true });
}

/** Challenges the name's holder; its answer only when it proves it has the key, else undefined. */
function askHolder(name: string, key: Buffer): Promise<LockHolder | undefined> {
  const nonce = randomBytes(32).toString("hex");
  return new Promise((resolve) => {
    let text = "";
    const socket = createConnection({ path: name });
    const finish = (holder: LockHolder | undefined): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(holder);
    };
    const timer = setTimeout(() => finish(undefined), ASK_TIMEOUT_MS);
    socket.setEncoding("utf8");
    socket.on("connect", () => socket.write(`${nonce}\n`));
    socket.on("data", (chunk: string) => {
      text += chunk;
      if (text.length > MAX_LINE) finish(undefined); // not our holder's answer
    });
    socket.on("end", () => finish(provenHolder(text, proof(key, nonce))));
    socket.on("error", () => finish(undefined));
  });
}

function provenHolder(text: string, expected: string): LockHolder | undefined {
  let answer: { pid?: unknown; url?: unknown; proof?: unknown } | null;
  try {
    answer = JSON.parse(text) as typeof answer;
  } catch {
    return undefined;
  }
  if (typeof answer !== "object" || answer === null) return undefined;
  const given = typeof answer.proof === "string" ? Buffer.from(answer.proof) : Buffer.alloc(0);
  if (given.length !== expected.length || !timingSafeEqual(given, Buffer.from(expected))) return undefined;
  if (!Number.isSafeInteger(answer.pid) || (answer.url !== null && typeof answer.url !== "string")) return undefined;
  return { pid: answer.pid as number, url: answer.url as string | null };
}

/** The message a refused daemon prints (of a holder that proved it holds the state directory). */
export function alreadyRunningMessage(holder: LockHolder, stateDir: string): string {
  return `hotline is already running (pid ${holder.pid}, ${holder.url ?? "still starting"}; state directory ${stateDir})`;
}
