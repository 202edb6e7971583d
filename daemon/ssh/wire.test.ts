import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { work } from "../watchdog/work.js";
import { WireWork } from "./wire.js";

/** A connected pair: the server's side (as the SSH listener accepts it, paused as ssh2 holds it) and the client's. */
async function pair(): Promise<{ server: Server; accepted: Socket; client: Socket }> {
  const server = createServer({ pauseOnConnect: true });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const accepted = new Promise<Socket>((resolve) => server.once("connection", resolve));
  const client = connect((server.address() as AddressInfo).port, "127.0.0.1");
  return { server, accepted: await accepted, client };
}

/** Stands in for ssh2's parser: a 'data' listener that holds the thread for `ms`, as a key exchange would. */
function busyParser(ms: number, then?: (socket: Socket) => void) {
  return function (this: Socket) {
    const until = performance.now() + ms;
    while (performance.now() < until);
    then?.(this);
  };
}

const sockets: Array<{ server: Server; accepted: Socket; client: Socket }> = [];
afterEach(() => {
  for (const p of sockets.splice(0)) {
    p.client.destroy();
    p.accepted.destroy();
    p.server.close();
  }
});

describe("WireWork", () => {
  it("times the parsing of each read: a late turn is blamed on the SSH handshake, then on the connection once authenticated", async () => {
    const p = await pair();
    sockets.push(p);
    const wire = new WireWork(p.accepted, "127.0.0.1:1");
    p.accepted.on("data", busyParser(60));
    p.accepted.resume();
    const since = performance.now();
    work.blame(since, 0); // a fresh window
    const read = new Promise((resolve) => p.accepted.once("data", () => setImmediate(resolve)));
    p.client.write("SSH-2.0-x\r\n");
    await read;
    expect(work.blame(since, 100)).toMatchObject({ cause: "ssh handshake", conn: "127.0.0.1:1" });
    wire.authenticate();
    const again = new Promise((resolve) => p.accepted.once("data", () => setImmediate(resolve)));
    p.client.write("more");
    await again;
    expect(work.blame(since, 100)).toMatchObject({ cause: "ssh connection", conn: "127.0.0.1:1" });
  });

  it("an SSH handshake is in flight until the connection authenticates or closes", async () => {
    const p = await pair();
    sockets.push(p);
    new WireWork(p.accepted, "127.0.0.1:2");
    work.blame(performance.now(), 0);
    expect(work.blame(performance.now(), 100).cause).toContain("ssh handshake");
  });

  it("stops reading a connection the parser gave up on (ended its side) before authentication", async () => {
    const p = await pair();
    sockets.push(p);
    new WireWork(p.accepted, "127.0.0.1:3");
    p.accepted.on(
      "data",
      busyParser(0, (socket) => socket.end()),
    );
    p.accepted.resume();
    const read = new Promise((resolve) => p.accepted.once("data", () => setImmediate(resolve)));
    p.client.write("not ssh\r\n");
    await read;
    expect(p.accepted.isPaused()).toBe(true);
    await new Promise<void>((resolve) => p.accepted.once("close", () => resolve()));
  });
});
