import { describe, expect, it } from "vitest";
import { requestBodyEnd, responseBodyEnd } from "./body.js";
import { HeadError, parseRequestHead, parseResponseHead } from "./head.js";

const request = (head: string) => parseRequestHead(`${head}\r\n\r\n`);
const response = (head: string) => parseResponseHead(`${head}\r\n\r\n`);

/** Feeds `bytes` to a body scanner in pieces cut at `cuts`; the index in the whole where the body ended, or -1. */
function endIn(scan: (chunk: Buffer, from: number) => number, bytes: Buffer, cuts: number[]): number {
  let offset = 0;
  for (const cut of [...cuts, bytes.length]) {
    const piece = bytes.subarray(offset, cut);
    const end = scan(piece, 0);
    if (end >= 0) return offset + end;
    offset = cut;
  }
  return -1;
}

/** What `fn` throws (undefined when it returns). */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
}

describe("HTTP/1.1 body ends", () => {
  const chunked = Buffer.from("4;ext=1\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nTrailer: x\r\n\r\nGET /next");

  it("finds the end of a chunked body however the bytes are cut", () => {
    const whole = chunked.indexOf("GET /next");
    for (let i = 0; i < 300; i++) {
      const cuts = [...new Set(Array.from({ length: 1 + (i % 6) }, () => 1 + Math.floor(Math.random() * (chunked.length - 1))))].sort(
        (a, b) => a - b,
      );
      const end = requestBodyEnd(request("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked"));
      expect(
        endIn((c, f) => end.scan(c, f), chunked, cuts),
        `cuts ${cuts}`,
      ).toBe(whole);
    }
  });

  it("finds the end of a sized body and of none", () => {
    const sized = requestBodyEnd(request("POST / HTTP/1.1\r\nContent-Length: 10"));
    expect(endIn((c, f) => sized.scan(c, f), Buffer.from("0123456789GET"), [3, 7])).toBe(10);
    expect(requestBodyEnd(request("GET / HTTP/1.1")).kind).toBe("none");
    expect(requestBodyEnd(request("POST / HTTP/1.1\r\nContent-Length: 7, 7")).kind).toBe("length");
  });

  it("refuses what two parsers could read two ways", () => {
    const refused: Array<[string, number]> = [
      ["POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked", 400],
      ["POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6", 400],
      ["POST / HTTP/1.1\r\nContent-Length: -5", 400],
      ["POST / HTTP/1.1\r\nContent-Length: 0x10", 400],
      ["POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked", 501],
      ["POST / HTTP/1.1\r\nTransfer-Encoding: chunked, chunked", 501],
    ];
    for (const [head, status] of refused) {
      const error = thrown(() => requestBodyEnd(request(head)));
      expect(error, head).toBeInstanceOf(HeadError);
      expect((error as HeadError).status, head).toBe(status);
    }
    for (const bad of ["5\nhello\r\n0\r\n\r\n", "5\r\nhello!\r\n", "zz\r\n", "5 \r\nhello\r\n"]) {
      const end = requestBodyEnd(request("POST / HTTP/1.1\r\nTransfer-Encoding: chunked"));
      expect(() => end.scan(Buffer.from(bad), 0), JSON.stringify(bad)).toThrow(HeadError);
    }
  });

  it("knows the answers without a body: HEAD, 1xx, 204, 304; and a body that runs to the close", () => {
    expect(responseBodyEnd(response("HTTP/1.1 200 OK\r\nContent-Length: 9"), "HEAD").kind).toBe("none");
    expect(responseBodyEnd(response("HTTP/1.1 204 No Content"), "GET").kind).toBe("none");
    expect(responseBodyEnd(response("HTTP/1.1 304 Not Modified\r\nContent-Length: 9"), "GET").kind).toBe("none");
    expect(responseBodyEnd(response("HTTP/1.1 200 OK"), "GET").kind).toBe("close");
    expect(responseBodyEnd(response("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\nContent-Length: 3"), "GET").kind).toBe(
      "chunked",
    );
  });
});

describe("HTTP/1.1 heads", () => {
  it("reads a request head and the fields the proxy acts on", () => {
    const head = request(
      "\r\nGET /a?b=1 HTTP/1.1\r\nHost: 5173.localhost:7070\r\nCookie: a=1\r\ncookie: b=2\r\nConnection: Keep-Alive, Upgrade\r\nUpgrade: websocket\r\nX-Hotline-Preview-Token:  t  ",
    );
    expect(head).toMatchObject({ method: "GET", target: "/a?b=1", minor: 1, host: "5173.localhost:7070", cookie: "a=1; b=2" });
    expect(head).toMatchObject({ connection: "keep-alive, upgrade", upgrade: "websocket", previewToken: "t" });
    expect(head.headers).toContain("Upgrade");
  });

  it("refuses a malformed head with the status it earns", () => {
    const cases: Array<[string, number]> = [
      ["GET / HTTP/1.1\nHost: x", 400],
      ["GET / HTTP/1.1\r\nHost: x\r\n folded", 400],
      ["GET / HTTP/1.1\r\nHost : x", 400],
      ["GET / HTTP/1.1\r\nHost: x\r\nHost: y", 400],
      ["GET / HTTP/1.1\r\nX: a\x01b", 400],
      ["GET  / HTTP/1.1", 400],
      ["GET / HTTP/2.0", 501],
      ["GET /\x7f HTTP/1.1", 400],
    ];
    for (const [head, status] of cases) {
      const error = thrown(() => request(head));
      expect(error, JSON.stringify(head)).toBeInstanceOf(HeadError);
      expect((error as HeadError).status, JSON.stringify(head)).toBe(status);
    }
    expect(() => response("HTTP/1.1 2000 OK")).toThrow(HeadError);
  });
});
