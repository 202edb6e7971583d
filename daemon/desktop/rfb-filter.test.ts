import { describe, expect, it } from "vitest";
import { ObserveFilter } from "./rfb-filter.js";

const pointer = [5, 1, 0, 10, 0, 20];
const key = [4, 1, 0, 0, 0, 0, 0, 0x61];
const update = [3, 1, 0, 0, 0, 0, 0, 16, 0, 16];

/** Feeds a session to a filter in pieces of `size` bytes; the server's bytes come first, as on the wire. */
function run(server: Buffer, client: Buffer, size: number): Buffer {
  const f = new ObserveFilter();
  const out: Buffer[] = [f.fromServer(server)];
  for (let i = 0; i < client.length; i += size) out.push(f.filter(client.subarray(i, i + size)));
  return Buffer.concat(out);
}

describe("ObserveFilter", () => {
  const cases: Array<{ name: string; server: string; security: number[]; client: number[]; expected: number[] }> = [
    {
      name: "RFB 3.8, None",
      server: "RFB 003.008\n",
      security: [],
      client: [...Buffer.from("RFB 003.008\n"), 1, 0, ...pointer, ...update, ...key],
      expected: [...Buffer.from("RFB 003.008\n"), 1, 1, ...update],
    },
    {
      name: "RFB 3.5 is sent on as 3.3; the server chose None",
      server: "RFB 003.008\n",
      security: [0, 0, 0, 1],
      client: [...Buffer.from("RFB 003.005\n"), 2, ...pointer, ...update],
      expected: [...Buffer.from("RFB 003.003\n"), 1, ...update],
    },
    {
      name: "RFB 3.3 with VNC authentication: the 16-byte response passes, then ClientInit",
      server: "RFB 003.008\n",
      security: [0, 0, 0, 2],
      client: [...Buffer.from("RFB 003.003\n"), ...Array(16).fill(7), 0, ...pointer],
      expected: [...Buffer.from("RFB 003.003\n"), ...Array(16).fill(7), 1],
    },
    {
      name: "RFB 3.889 from a viewer is 3.8, capped at a 3.7 server's",
      server: "RFB 003.007\n",
      security: [],
      client: [...Buffer.from("RFB 003.889\n"), 2, ...Array(16).fill(9), 1, ...key, ...update],
      expected: [...Buffer.from("RFB 003.007\n"), 2, ...Array(16).fill(9), 1, ...update],
    },
  ];
  for (const c of cases) {
    it(`${c.name}: the same bytes pass however the stream is cut`, () => {
      const server = Buffer.concat([Buffer.from(c.server), Buffer.from(c.security)]);
      for (const size of [1, 2, 3, 5, 7, 16, 1000])
        expect([...run(server, Buffer.from(c.client), size)], `pieces of ${size}`).toEqual(c.expected);
    });
  }

  it("holds a viewer's bytes until the server's greeting (and 3.3's security type) arrive", () => {
    const f = new ObserveFilter();
    expect(f.filter(Buffer.from([...Buffer.from("RFB 003.003\n"), 1, ...pointer, ...update])).length).toBe(0);
    expect(f.fromServer(Buffer.from("RFB 003.008\n")).toString("latin1")).toBe("RFB 003.003\n");
    expect([...f.fromServer(Buffer.from([0, 0, 0, 1]))]).toEqual([1, ...update]);
  });

  it("ends the stream on a greeting that is not RFB 3.x", () => {
    for (const greeting of ["RFB 004.001\n", "RFB +03.005\n", "RFB 003.00x\n", "GET / HTTP/1.\n"]) {
      const f = new ObserveFilter();
      f.fromServer(Buffer.from("RFB 003.008\n"));
      expect(() => f.filter(Buffer.from(greeting)), greeting).toThrow(/RFB/);
    }
  });
});
