import { connect, type Socket } from "node:net";
import { describe, expect, it, onTestFinished } from "vitest";
import { useDaemon } from "./helpers/daemon.js";
import { describeStall, stallsOverBudget } from "./helpers/stalls.js";
import { rssOf, untilQuiet } from "./preview/helpers.js";

/** Issue 33 #1: one client's pipelined requests, unauthenticated, must not hold the daemon's event loop. */
const REQUESTS = 40_000;

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => resolve(socket));
    socket.once("error", reject);
    onTestFinished(() => void socket.destroy());
  });
}

/** How many times `needle` occurs in what was read so far, carrying a partial match across chunks. */
function counter(needle: string): { add(chunk: Buffer): number; count: number } {
  let tail = "";
  const state = {
    count: 0,
    add(chunk: Buffer): number {
      const text = tail + chunk.toString("latin1");
      for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) state.count++;
      tail = text.slice(Math.max(0, text.length - needle.length + 1));
      return state.count;
    },
  };
  return state;
}

describe("pipelined requests on the daemon's port", () => {
  const t = useDaemon();
  const port = (): number => Number(new URL(t.daemon.url).port);

  it(`${REQUESTS.toLocaleString("en")} pipelined GET / in one write, no token: every one answered in order, no turn over the budget`, async () => {
    const stallsBefore = t.daemon.stalls.length;
    const socket = await open(port());
    const answers = counter("HTTP/1.1 200 OK\r\n");
    const all = new Promise<void>((resolve, reject) => {
      socket.on("data", (chunk: Buffer) => {
        if (answers.add(chunk) === REQUESTS) resolve();
      });
      socket.once("close", () => reject(new Error(`closed after ${answers.count} answers`)));
    });
    socket.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${port()}\r\n\r\n`.repeat(REQUESTS));
    // Meanwhile another client is served.
    const observer = await t.daemon.client();
    for (let i = 0; i < 5; i++) await observer.ok("state.info");
    await observer.close();
    await all;
    const stalls = t.daemon.stalls.slice(stallsBefore);
    // Any late turn the watchdog saw (none over the budget: see below) is blamed on the front door, not on a bystander.
    for (const stall of stalls) expect(stall.cause, describeStall(stall)).toContain("http front door");
    expect(stallsOverBudget(t.daemon, stallsBefore).map(describeStall)).toEqual([]);
  }, 180_000);

  it("a client that pipelines without reading is read no further than its answers are taken: the daemon does not grow", async () => {
    const stallsBefore = t.daemon.stalls.length;
    const pid = t.daemon.proc.pid!;
    const before = rssOf(pid);
    const socket = await open(port());
    socket.pause();
    // 8 MB of requests, 200,000 answers of ~900 bytes if they were all made.
    const flood = `GET / HTTP/1.1\r\nHost: 127.0.0.1:${port()}\r\n\r\n`.repeat(REQUESTS);
    for (let i = 0; i < 5; i++) socket.write(flood);
    // Until the daemon stops taking the client's bytes (its answers are not read), or has taken them all.
    // Until the daemon has done all it will with the flood (before the fix: answered every request).
    await untilQuiet(pid);
    const grown = rssOf(pid) - before;
    expect(socket.writableLength, "the daemon stopped reading a client that takes no answers").toBeGreaterThan(0);
    expect(grown, `RSS grew by ${Math.round(grown / 2 ** 20)} MiB`).toBeLessThan(40 * 2 ** 20);
    expect(stallsOverBudget(t.daemon, stallsBefore).map(describeStall)).toEqual([]);
    // And the daemon still serves everyone else.
    expect((await t.client.ok("state.info")).eventLoop).toBeDefined();
  }, 360_000);
});
