import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { connect, createServer as createNetServer, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WorkTracker } from "../watchdog/work.js";
import { afterHeads, HEADS_PER_CONNECTION, PacedIntake, UNPROVEN_HEADS_PER_TURN } from "./paced-intake.js";

/** A real HTTP server fed by a real TCP listener through the intake, as server.ts wires it. */
async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void, unproven = true) {
  const tracker = new WorkTracker();
  const intake = new PacedIntake(() => unproven, tracker);
  const http = createServer(handler);
  const upgrades: Array<{ socket: Socket; head: Buffer }> = [];
  http.on("upgrade", (_req, socket: Socket, head: Buffer) => {
    intake.release(socket);
    upgrades.push({ socket, head });
  });
  const front = createNetServer({ allowHalfOpen: true }, (socket) => {
    intake.adopt(socket);
    http.emit("connection", socket);
    intake.start(socket);
  });
  await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
  const port = (front.address() as { port: number }).port;
  cleanups.push(() => {
    front.close();
    http.closeAllConnections();
  });
  return { port, upgrades, tracker };
}

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** Counts calls per turn of the event loop (between two check-phase callbacks of its own). */
function perTurn(): { hit(): void; max(): number; stop(): void } {
  let current = 0;
  let max = 0;
  let stopped = false;
  const tick = (): void => {
    max = Math.max(max, current);
    current = 0;
    if (!stopped) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    hit: () => void current++,
    max: () => Math.max(max, current),
    stop: () => void (stopped = true),
  };
}

function client(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => resolve(socket));
    socket.once("error", reject);
    cleanups.push(() => socket.destroy());
  });
}

/** Resolves with everything the socket reads until `done(text)` says so. */
function readUntil(socket: Socket, done: (text: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
      if (done(text)) resolve(text);
    });
    socket.once("close", () => (done(text) ? resolve(text) : reject(new Error(`closed after ${text.length} bytes`))));
  });
}

const answers = (text: string): string[] => [...text.matchAll(/\r\n\r\n(\/\d+)/g)].map((m) => m[1]!);

describe("afterHeads", () => {
  it("finds where the first heads end, counting CRLF and bare-LF empty lines", () => {
    const three = Buffer.from("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\n\nGET /c HTTP/1.1\r\n\r\n");
    expect(afterHeads(three, 8)).toEqual({ end: three.length, heads: 3 });
    const two = afterHeads(three, 2);
    expect(two.heads).toBe(2);
    expect(three.subarray(0, two.end).toString()).toBe("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\n\nGET /c HTTP/1.1\r");
  });
});

describe("PacedIntake", () => {
  it("hands the server at most a few pipelined requests of one connection per turn, all answered in order", async () => {
    const turns = perTurn();
    const { port, tracker } = await serve((req, res) => {
      turns.hit();
      res.end(req.url);
    });
    const socket = await client(port);
    const count = 3000;
    const all = readUntil(socket, (text) => text.endsWith(`\r\n\r\n/${count - 1}`));
    socket.write(Array.from({ length: count }, (_, i) => `GET /${i} HTTP/1.1\r\nHost: x\r\n\r\n`).join(""));
    const text = await all;
    turns.stop();
    expect(answers(text)).toEqual(Array.from({ length: count }, (_, i) => `/${i}`));
    // A turn of the intake can straddle two of the counter's: twice the allowance at most.
    expect(turns.max()).toBeGreaterThan(0);
    expect(turns.max()).toBeLessThanOrEqual(2 * HEADS_PER_CONNECTION);
    // The parsing and answering were timed for the watchdog, under the front door's name.
    expect(tracker.blame(0, 0).cause).toContain("http front door");
  });

  it("shares the allowance of connections not yet authorised: many flooding at once get few requests per turn together", async () => {
    const turns = perTurn();
    const { port } = await serve((req, res) => {
      turns.hit();
      res.end(req.url);
    });
    const sockets = await Promise.all(Array.from({ length: 20 }, () => client(port)));
    const count = 200;
    const flood = Array.from({ length: count }, (_, i) => `GET /${i} HTTP/1.1\r\nHost: x\r\n\r\n`).join("");
    const all = sockets.map((s) => readUntil(s, (text) => text.endsWith(`\r\n\r\n/${count - 1}`)));
    for (const s of sockets) s.write(flood);
    for (const text of await Promise.all(all)) expect(answers(text)).toHaveLength(count);
    turns.stop();
    expect(turns.max()).toBeLessThanOrEqual(2 * UNPROVEN_HEADS_PER_TURN);
  });

  it("passes a body split over turns intact, and the end of the stream after what was queued", async () => {
    const { port } = await serve((req, res) => {
      const hash = createHash("sha256");
      req.on("data", (c: Buffer) => hash.update(c));
      req.on("end", () => res.end(`${req.url} ${hash.digest("hex")}`));
    });
    const body = randomBytes(200 * 1024);
    const expected = createHash("sha256").update(body).digest("hex");
    const socket = await client(port);
    let text = "";
    socket.on("data", (c: Buffer) => (text += c.toString("latin1")));
    const closed = new Promise((resolve) => socket.once("close", resolve));
    socket.write(`POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n`);
    socket.write(body);
    socket.end("GET /last HTTP/1.1\r\nHost: x\r\n\r\n");
    // Half-closed after its requests: both are answered, then the server closes.
    await closed;
    expect(text).toContain(`/up ${expected}`);
    expect(text).toMatch(/\/last [0-9a-f]{64}$/);
  });

  it("gives an upgraded socket back whole: the bytes after the upgrade's head, queued or not, arrive in order", async () => {
    const { port, upgrades } = await serve((req, res) => res.end(req.url), false);
    const socket = await client(port);
    const after = randomBytes(150 * 1024);
    const requests = Array.from({ length: 20 }, (_, i) => `GET /${i} HTTP/1.1\r\nHost: x\r\n\r\n`).join("");
    socket.write(
      Buffer.concat([Buffer.from(`${requests}GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n`), after]),
    );
    await expect.poll(() => upgrades.length).toBe(1);
    const { socket: upgraded, head } = upgrades[0]!;
    const got: Buffer[] = [head];
    let length = head.length;
    await new Promise<void>((resolve) => {
      if (length >= after.length) return resolve();
      upgraded.on("data", (c: Buffer) => {
        got.push(c);
        length += c.length;
        if (length >= after.length) resolve();
      });
    });
    expect(Buffer.concat(got).equals(after)).toBe(true);
  });
});
