import { EventEmitter } from "node:events";
import { pino } from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { WebSocket } from "ws";
import type { ConnectionState } from "../daemon/actions/context.js";
import type { Dispatcher } from "../daemon/dispatch/dispatcher.js";
import type { Follower } from "../daemon/jobs/follow.js";
import { CLOSE_TOKEN_INVALID, Connection } from "../daemon/server/connection.js";

/** Stands in for a ws socket (a third-party part): records how the connection closed it. */
class FakeSocket extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;
  closes: Array<[number, string]> = [];
  close(code: number, reason: string): void {
    this.closes.push([code, reason]);
    this.readyState = 2;
  }
  pause(): void {}
  resume(): void {}
  ping(): void {}
  terminate(): void {}
}

const DAY = 24 * 60 * 60 * 1000;

function connect(socket: FakeSocket): Connection {
  const log = pino({ enabled: false });
  return new Connection(socket as unknown as WebSocket, "c1", "manage", "t1", {} as Dispatcher, 1 << 20, () => undefined, log);
}

afterEach(() => vi.useRealTimers());

describe("Connection.expireAt", () => {
  it("keeps a 30-day token's connection past setTimeout's ~24.8-day limit and closes it at day 30", () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    const socket = new FakeSocket();
    connect(socket).expireAt(Date.now() + 30 * DAY);
    vi.advanceTimersByTime(25 * DAY);
    expect(socket.closes).toEqual([]);
    vi.advanceTimersByTime(5 * DAY - 1000);
    expect(socket.closes).toEqual([]);
    vi.advanceTimersByTime(1000);
    expect(socket.closes).toEqual([[CLOSE_TOKEN_INVALID, "the token has expired"]]);
  });
});

describe("Connection close", () => {
  it("runs every cleanup and later close listeners even when one follower's close throws", () => {
    const socket = new FakeSocket();
    const connection = connect(socket);
    const closed: string[] = [];
    const follower = (name: string, fails = false) =>
      ({
        close: () => {
          closed.push(name);
          if (fails) throw new Error(`${name} failed to close`);
        },
      }) as unknown as Follower;
    connection.state.followers.set("a", follower("a", true));
    connection.state.followers.set("b", follower("b"));
    connection.state.files = { close: () => closed.push("files") } as unknown as ConnectionState["files"];
    let released = false;
    socket.on("close", () => (released = true)); // as the server releases the connection's slot
    socket.emit("close");
    expect(closed).toEqual(["a", "b", "files"]);
    expect(connection.state.followers.size).toBe(0);
    expect(released).toBe(true);
  });
});
