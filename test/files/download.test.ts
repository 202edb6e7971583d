import { createHash, randomBytes } from "node:crypto";
import { mkdir, open, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { downloadFile } from "../../daemon/runners/download.js";
import { BatchedSink } from "../../daemon/runners/download-sink.js";
import { InPlaceHash } from "../../daemon/runners/hash-thread.js";
import { sanitizeFileName, nameFromContentDisposition } from "../../daemon/runners/download-name.js";
import { listDir, rejection, progressReached, serveBytes, startServer, tempDir, testContext } from "./helpers.js";

const BODY = randomBytes(3 * 1024 * 1024 + 123);
const BODY_SHA = createHash("sha256").update(BODY).digest("hex");

describe("downloadFile", () => {
  it("downloads a file, hashing it, and reports byte progress with the total", async () => {
    const { url } = await startServer({ "/file.bin": serveBytes(BODY) });
    const dir = await tempDir();
    const ctx = testContext();
    const result = await downloadFile(ctx, { url: `${url}/file.bin`, dest: join(dir, "out.bin"), sha256: BODY_SHA.toUpperCase() });
    expect(result).toEqual({
      path: join(dir, "out.bin"),
      size: BODY.length,
      sha256: BODY_SHA,
      url: `${url}/file.bin`,
      verified: { sha256: BODY_SHA, against: "sha256" },
    });
    expect((await readFile(join(dir, "out.bin"))).equals(BODY)).toBe(true);
    expect(await listDir(dir)).toEqual(["out.bin"]);
    const last = ctx.updates.at(-1)!;
    expect(last).toMatchObject({ phase: "download", unit: "bytes", done: BODY.length, total: BODY.length });
  });

  it("follows a redirect chain and reports the final URL", async () => {
    const { url } = await startServer({
      "/a": (_q, s) => s.writeHead(301, { location: "/b" }).end(),
      "/b": (_q, s) => s.writeHead(307, { location: "c?x=1" }).end(),
      "/c": serveBytes(BODY),
    });
    const dir = await tempDir();
    const result = await downloadFile(testContext(), { url: `${url}/a`, dest: join(dir, "f") });
    expect(result.url).toBe(`${url}/c`);
    expect(result.sha256).toBe(BODY_SHA);
  });

  it("stops a redirect loop with a clear error", async () => {
    const { url } = await startServer({
      "/a": (_q, s) => s.writeHead(302, { location: "/b" }).end(),
      "/b": (_q, s) => s.writeHead(302, { location: "/a" }).end(),
    });
    const dir = await tempDir();
    const err = await rejection(downloadFile(testContext(), { url: `${url}/a`, dest: join(dir, "f") }));
    expect(err.message).toMatch(/redirect loop: .*\/a -> .*\/b -> .*\/a/);
    expect(await listDir(dir)).toEqual([]);
  });

  it("stops after too many redirects", async () => {
    const { url } = await startServer({
      "/r": (q, s) => s.writeHead(302, { location: `/r?n=${Number(new URL(q.url!, "http://x").searchParams.get("n") ?? 0) + 1}` }).end(),
    });
    const dir = await tempDir();
    const err = await rejection(downloadFile(testContext(), { url: `${url}/r`, dest: join(dir, "f"), maxRedirects: 3 }));
    expect(err.message).toMatch(/more than 3 redirects/);
  });

  it("resumes with a Range request after the server drops the connection mid-body", async () => {
    let first = true;
    const ranged: string[] = [];
    const serve = serveBytes(BODY);
    const ctx = testContext();
    // The drop comes only once the client reports bytes received: a socket destroyed as soon as
    // the server's write was handed to the kernel could discard data the client never read.
    const received = progressReached(ctx, (u) => u.phase === "download" && (u.done ?? 0) > 0);
    const { url } = await startServer({
      "/drop": (req, res) => {
        if (req.headers.range) ranged.push(`${req.headers.range} if-range=${req.headers["if-range"]}`);
        if (!first) return serve(req, res);
        first = false;
        res.writeHead(200, { "content-length": BODY.length, etag: '"v1"', "accept-ranges": "bytes" });
        res.write(BODY.subarray(0, 1_500_000));
        void received.then(() => res.socket?.destroy());
      },
    });
    const dir = await tempDir();
    const result = await downloadFile(ctx, { url: `${url}/drop`, dest: join(dir, "f"), sha256: BODY_SHA, retryDelayMs: 0 });
    expect(result.size).toBe(BODY.length);
    expect(ranged).toHaveLength(1);
    expect(ranged[0]).toMatch(/^bytes=\d+- if-range="v1"$/);
    expect(Number(/=(\d+)-/.exec(ranged[0]!)![1])).toBeGreaterThanOrEqual((await received).done!);
    expect((await received).done).toBeGreaterThan(0);
    expect((await readFile(join(dir, "f"))).equals(BODY)).toBe(true);
  });

  it("gives up after the bounded number of resume attempts and leaves nothing", async () => {
    const { url, hits } = await startServer({
      "/flaky": (req, res) => {
        const start = Number(/bytes=(\d+)-/.exec(req.headers.range ?? "")?.[1] ?? 0);
        res.writeHead(start ? 206 : 200, {
          "content-length": BODY.length - start,
          "accept-ranges": "bytes",
          ...(start ? { "content-range": `bytes ${start}-${BODY.length - 1}/${BODY.length}` } : {}),
        });
        res.write(BODY.subarray(start, start + 1000), () => res.socket?.destroy());
      },
    });
    const dir = await tempDir();
    const err = await rejection(downloadFile(testContext(), { url: `${url}/flaky`, dest: join(dir, "f"), maxRetries: 2, retryDelayMs: 0 }));
    expect(err.code).toBe("unavailable");
    expect(err.message).toMatch(/dropped after \d+ bytes and 2 resume attempts/);
    expect(hits["/flaky"]).toBe(3);
    expect(await listDir(dir)).toEqual([]);
  });

  it("refuses a wrong SHA-256, naming both hashes, leaving nothing and the old file untouched", async () => {
    const { url } = await startServer({ "/file.bin": serveBytes(BODY) });
    const dir = await tempDir();
    await writeFile(join(dir, "f"), "old");
    const wrong = "0".repeat(64);
    const err = await rejection(
      downloadFile(testContext(), { url: `${url}/file.bin`, dest: join(dir, "f"), sha256: wrong, overwrite: true }),
    );
    expect(err.code).toBe("invalid_request");
    expect(err.message).toContain(wrong);
    expect(err.message).toContain(BODY_SHA);
    expect(err.details).toEqual({ expected: wrong, actual: BODY_SHA });
    expect(await listDir(dir)).toEqual(["f"]);
    expect(await readFile(join(dir, "f"), "utf8")).toBe("old");
  });

  it("refuses an existing destination without overwrite, and replaces it with overwrite", async () => {
    const { url, hits } = await startServer({ "/file.bin": serveBytes(BODY) });
    const dir = await tempDir();
    await writeFile(join(dir, "f"), "old");
    const err = await rejection(downloadFile(testContext(), { url: `${url}/file.bin`, dest: join(dir, "f") }));
    expect(err.code).toBe("conflict");
    expect(err.path).toBe("/dest");
    expect(hits["/file.bin"]).toBeUndefined();
    expect(await readFile(join(dir, "f"), "utf8")).toBe("old");
    await downloadFile(testContext(), { url: `${url}/file.bin`, dest: join(dir, "f"), overwrite: true });
    expect((await readFile(join(dir, "f"))).equals(BODY)).toBe(true);
  });

  it("places the file in a directory under the Content-Disposition or URL name, sanitized", async () => {
    const { url } = await startServer({
      "/dl/tool-1.0.tar.gz": serveBytes(BODY),
      "/get": serveBytes(BODY, '"v1"', { "content-disposition": 'attachment; filename="../../etc/evil name.txt"' }),
    });
    const dir = await tempDir();
    const a = await downloadFile(testContext(), { url: `${url}/dl/tool-1.0.tar.gz`, dest: dir });
    expect(a.path).toBe(join(dir, "tool-1.0.tar.gz"));
    const b = await downloadFile(testContext(), { url: `${url}/get`, dest: `${dir}/` });
    expect(b.path).toBe(join(dir, "evil name.txt"));
    const again = await rejection(downloadFile(testContext(), { url: `${url}/get`, dest: dir }));
    expect(again.code).toBe("conflict");
    expect(await listDir(dir)).toEqual(["evil name.txt", "tool-1.0.tar.gz"]);
  });

  it("refuses schemes other than http and https", async () => {
    const dir = await tempDir();
    for (const bad of ["file:///etc/passwd", "ftp://127.0.0.1/x", "not a url"]) {
      const err = await rejection(downloadFile(testContext(), { url: bad, dest: join(dir, "f") }));
      expect(err.code).toBe("invalid_request");
      expect(err.path).toBe("/url");
    }
  });

  it("refuses a redirect to a non-http scheme", async () => {
    const { url } = await startServer({ "/a": (_q, s) => s.writeHead(302, { location: "file:///etc/passwd" }).end() });
    const dir = await tempDir();
    const err = await rejection(downloadFile(testContext(), { url: `${url}/a`, dest: join(dir, "f") }));
    expect(err.message).toMatch(/redirected to a file: URL/);
    expect(await listDir(dir)).toEqual([]);
  });

  it("reports 404 as not_found and leaves nothing", async () => {
    const { url } = await startServer({});
    const dir = await tempDir();
    const err = await rejection(downloadFile(testContext(), { url: `${url}/missing`, dest: join(dir, "f") }));
    expect(err.code).toBe("not_found");
    expect(err.details).toEqual({ status: 404 });
    expect(await listDir(dir)).toEqual([]);
  });

  it("cancels a slow download and removes the partial file", async () => {
    const { url } = await startServer({
      "/slow": (_q, res) => {
        res.writeHead(200, { "content-length": 100 * 1024 * 1024 });
        res.write(Buffer.alloc(64 * 1024, 7)); // then never another byte
      },
    });
    const dir = await tempDir();
    const ctx = testContext();
    const started = progressReached(ctx, (u) => (u.done ?? 0) > 0);
    const pending = downloadFile(ctx, { url: `${url}/slow`, dest: join(dir, "f") });
    await started;
    expect((await listDir(dir)).length).toBe(1); // the partial file exists while running
    ctx.controller.abort(new Error("cancelled by test"));
    await expect(pending).rejects.toThrow("cancelled by test");
    expect(await listDir(dir)).toEqual([]);
  });

  it("requires the destination's directory to exist", async () => {
    const dir = await tempDir();
    const err = await rejection(downloadFile(testContext(), { url: "http://127.0.0.1:9/x", dest: join(dir, "no", "f") }));
    expect(err.code).toBe("not_found");
    await mkdir(join(dir, "sub"));
    const bad = await rejection(downloadFile(testContext(), { url: "http://127.0.0.1:9/x", dest: join(dir, "f"), sha256: "abc" }));
    expect(bad.path).toBe("/sha256");
  });
});

describe("download file names", () => {
  it("reduces hostile names to one safe component", () => {
    expect(sanitizeFileName("../../etc/passwd")).toBe("passwd");
    expect(sanitizeFileName("..")).toBe("download");
    expect(sanitizeFileName("a\\b\u0000c")).toBe("bc");
    expect(sanitizeFileName("x".repeat(300)).length).toBe(255);
    expect(nameFromContentDisposition("attachment; filename*=UTF-8''na%C3%AFve.txt; filename=\"x\"")).toBe("naïve.txt");
    expect(nameFromContentDisposition("inline; filename=plain.bin")).toBe("plain.bin");
  });
});

describe("BatchedSink", () => {
  it("writes batches in order with the hash of every byte, and turns a failed write into a structured error", async () => {
    const dir = await tempDir();
    const handle = await open(join(dir, "out"), "w");
    const hash = new InPlaceHash();
    const sink = new BatchedSink(handle, hash, 0);
    for (let at = 0; at < BODY.length; at += 100_000) await sink.push(BODY.subarray(at, at + 100_000));
    await sink.drain();
    await handle.close();
    expect(sink.written).toBe(BODY.length);
    expect(await hash.digest()).toBe(BODY_SHA);
    expect((await readFile(join(dir, "out"))).equals(BODY)).toBe(true);
    const full = await open("/dev/full", "w");
    const failing = new BatchedSink(full, new InPlaceHash(), 0);
    const err = await rejection(failing.push(Buffer.alloc(2 * 1024 * 1024)).then(() => failing.drain()));
    expect(err).toMatchObject({ code: "internal", message: expect.stringContaining("ENOSPC") });
    await full.close();
  });
});
