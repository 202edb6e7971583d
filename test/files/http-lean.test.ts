import { createHash, randomBytes } from "node:crypto";
import { createServer as createTcpServer } from "node:net";
import type { AddressInfo } from "node:net";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { downloadFile } from "../../daemon/runners/download.js";
import { leanGet, leanRequestable } from "../../daemon/runners/http-lean.js";
import { listDir, rejection, startServer, tempDir, testContext } from "./helpers.js";

const BODY = randomBytes(2 * 1024 * 1024 + 77);
const BODY_SHA = createHash("sha256").update(BODY).digest("hex");

/** A TCP server that answers every connection with these exact bytes, then closes. */
async function rawServer(reply: Buffer | string): Promise<string> {
  const server = createTcpServer((socket) => {
    socket.once("data", () => socket.end(reply));
    socket.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("the lean plain-http receive of download bodies", () => {
  it("reads a Content-Length body in large views, every byte in order", async () => {
    const { url } = await startServer({ "/b": (_q, res) => res.writeHead(200, { "content-length": BODY.length }).end(BODY) });
    const res = await leanGet(new URL(`${url}/b`), { "user-agent": "hotline" }, new AbortController().signal);
    expect(res?.statusCode).toBe(200);
    expect(res?.headers["content-length"]).toBe(String(BODY.length));
    const chunks: Buffer[] = [];
    for await (const chunk of res!.body) chunks.push(chunk);
    expect(Buffer.concat(chunks).equals(BODY)).toBe(true);
  });

  it("leaves a chunked response to undici: the download still gets every byte", async () => {
    const { url, hits } = await startServer({
      "/c": (_q, res) => {
        res.writeHead(200, { "content-type": "application/octet-stream" }); // no length: chunked
        res.write(BODY.subarray(0, 1000));
        res.end(BODY.subarray(1000));
      },
    });
    expect(await leanGet(new URL(`${url}/c`), {}, new AbortController().signal)).toBeUndefined();
    const dir = await tempDir();
    const result = await downloadFile(testContext(), { url: `${url}/c`, dest: join(dir, "f"), sha256: BODY_SHA });
    expect(result.size).toBe(BODY.length);
    expect((await readFile(join(dir, "f"))).equals(BODY)).toBe(true);
    expect(hits["/c"]).toBe(3); // the probe above, then the lean attempt and undici's request
  });

  it("ignores bytes a server sends past its Content-Length", async () => {
    const url = await rawServer("HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhelloEXTRA");
    const dir = await tempDir();
    const result = await downloadFile(testContext(), { url: `${url}/x`, dest: join(dir, "f") });
    expect(result.size).toBe(5);
    expect(await readFile(join(dir, "f"), "utf8")).toBe("hello");
  });

  it("skips an interim 1xx head and reads the final response", async () => {
    const url = await rawServer('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\nETag: "a"\r\n\r\nok');
    const res = await leanGet(new URL(`${url}/x`), {}, new AbortController().signal);
    expect(res?.statusCode).toBe(200);
    expect(res?.headers.etag).toBe('"a"');
  });

  it("refuses a response head over 64 KiB (interim heads counted) and a garbage status line, leaving nothing", async () => {
    const huge = await rawServer(`HTTP/1.1 200 OK\r\nx-pad: ${"a".repeat(70 * 1024)}\r\n\r\n`);
    const dir = await tempDir();
    const err = await rejection(downloadFile(testContext(), { url: `${huge}/x`, dest: join(dir, "f") }));
    expect(err.code).toBe("unavailable");
    expect(err.message).toContain("larger than 65536 bytes");
    const interim = await rawServer("HTTP/1.1 100 Continue\r\n\r\n".repeat(3000));
    const err1 = await rejection(downloadFile(testContext(), { url: `${interim}/x`, dest: join(dir, "f") }));
    expect(err1.message).toContain("larger than 65536 bytes");
    const garbage = await rawServer("SSH-2.0-OpenSSH_9.2\r\n\r\n");
    const err2 = await rejection(downloadFile(testContext(), { url: `${garbage}/x`, dest: join(dir, "f") }));
    expect(err2.code).toBe("unavailable");
    expect(err2.message).toContain("not an HTTP/1.1 response");
    expect(await listDir(dir)).toEqual([]);
  });

  it("fails a body cut short with what arrived handed out first, so a resume continues from there", async () => {
    const url = await rawServer(Buffer.concat([Buffer.from("HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n"), Buffer.alloc(40, 1)]));
    const res = await leanGet(new URL(`${url}/x`), {}, new AbortController().signal);
    let got = 0;
    await expect(
      (async () => {
        for await (const chunk of res!.body) got += chunk.length;
      })(),
    ).rejects.toThrow("other side closed");
    expect(got).toBe(40);
  });

  it("is taken only for plain http without URL credentials and with well-formed headers", () => {
    expect(leanRequestable(new URL("http://h/x"), { range: "bytes=5-" })).toBe(true);
    expect(leanRequestable(new URL("https://h/x"), {})).toBe(false);
    expect(leanRequestable(new URL("http://u:p@h/x"), {})).toBe(false);
    expect(leanRequestable(new URL("http://h/x"), { "x-a": "1\r\nx-b: 2" })).toBe(false);
    expect(leanRequestable(new URL("http://h/x"), { "bad name": "1" })).toBe(false);
  });
});
