import { createHash, randomBytes } from "node:crypto";
import { open, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { downloadFile as DownloadFile } from "../../daemon/runners/download.js";
import type * as HashThread from "../../daemon/runners/hash-thread.js";
import { serveBytes, startServer, tempDir, testContext } from "./helpers.js";

// The hashing thread runs the compiled worker, so these tests use the build (npm test builds first).
const DIST = new URL("../../dist/daemon/runners/", import.meta.url).pathname;
const { sha256Of, InPlaceHash } = (await import(join(DIST, "hash-thread.js"))) as typeof HashThread;
const { downloadFile } = (await import(join(DIST, "download.js"))) as { downloadFile: typeof DownloadFile };

const MiB = 1024 * 1024;
const BODY = randomBytes(24 * MiB + 5);
const BODY_SHA = createHash("sha256").update(BODY).digest("hex");
const sha = (b: Buffer): string => createHash("sha256").update(b).digest("hex");

describe("the hashing thread", () => {
  it("hashes a large file from the disk as it is written, in pieces of any size", async () => {
    const dir = await tempDir();
    const handle = await open(join(dir, "f"), "w");
    const hash = await sha256Of(handle, BODY.length);
    expect(hash).not.toBeInstanceOf(InPlaceHash);
    for (let at = 0, size = 1; at < BODY.length; at += size, size = (size * 7 + 13_001) % (3 * MiB)) {
      const part = BODY.subarray(at, at + size);
      await handle.write(part, 0, part.length, at);
      // No buffers given: the thread must read what is on disk.
      hash.wrote([], Math.min(BODY.length, at + size));
    }
    expect(await hash.digest()).toBe(BODY_SHA);
    await handle.close();
    // Small bodies are hashed in place.
    const small = await open(join(dir, "s"), "w");
    expect(await sha256Of(small, 1000)).toBeInstanceOf(InPlaceHash);
    await small.close();
  });

  it("keeps concurrent files apart, a dropped one disturbs no other, and a file cut short fails its hash", async () => {
    const dir = await tempDir();
    const other = randomBytes(5 * MiB);
    const files = await Promise.all(["a", "b", "c", "d"].map((n) => open(join(dir, n), "w")));
    const [a, b, c, d] = await Promise.all(files.map((f) => sha256Of(f, null)));
    for (let at = 0; at < 5 * MiB; at += MiB) {
      await Promise.all(files.map((f, i) => f.write(i === 0 ? BODY : other, at, MiB, at)));
      for (const h of [a!, b!, c!]) h.wrote([], at + MiB);
      if (at === 2 * MiB) c!.drop();
    }
    d!.wrote([], 6 * MiB); // one MiB more than the file holds
    expect(await Promise.all([a!.digest(), b!.digest()])).toEqual([sha(BODY.subarray(0, 5 * MiB)), sha(other)]);
    await expect(d!.digest()).rejects.toMatchObject({ code: "internal", message: expect.stringContaining("ended at byte") });
    await Promise.all(files.map((f) => f.close()));
  });

  it("gives a lean download, one read by undici, and one started over after a drop their own right hashes", async () => {
    let restarts = 0;
    const { url } = await startServer({
      "/lean": serveBytes(BODY),
      "/chunked": (_q, res) => {
        res.writeHead(200, { "content-type": "application/octet-stream" });
        res.end(BODY);
      },
      // The first answer breaks off halfway; the retry is answered whole with 200 (Range ignored).
      "/restart": (_q, res) => {
        if (restarts++ === 0) {
          res.writeHead(200, { "content-length": BODY.length });
          res.write(BODY.subarray(0, 12 * MiB), () => res.destroy());
        } else res.writeHead(200, { "content-length": BODY.length }).end(BODY);
      },
    });
    const dir = await tempDir();
    const results = await Promise.all(
      ["lean", "chunked", "restart"].map((name) =>
        downloadFile(testContext(), { url: `${url}/${name}`, dest: join(dir, name), retryDelayMs: 10 }),
      ),
    );
    for (const r of results) expect(r).toMatchObject({ size: BODY.length, sha256: BODY_SHA });
    expect(restarts).toBe(2);
    expect((await readFile(join(dir, "restart"))).equals(BODY)).toBe(true);
    const wrong = "0".repeat(64);
    await expect(downloadFile(testContext(), { url: `${url}/lean`, dest: join(dir, "w"), sha256: wrong })).rejects.toMatchObject({
      code: "invalid_request",
      path: "/sha256",
      details: { expected: wrong, actual: BODY_SHA },
    });
  });
});
