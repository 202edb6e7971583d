import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createGzip } from "node:zlib";
import { describe, expect, it } from "vitest";
import { useDaemon } from "../helpers/daemon.js";
import { buildTar, writeZeroTar } from "./archive-builders.js";
import { scratchDirs, serveBytes, startServer } from "./helpers.js";

/** Issue 10.13: inputs that used to fail as `internal` or "damaged" get their own code and a way out. */
describe("files.* error codes", () => {
  const ctx = useDaemon();
  const { fresh } = scratchDirs("hotline-codes-");

  it("refuses a NUL byte in any absolute path with invalid_request naming the field", async () => {
    const dir = fresh();
    for (const [action, params, field] of [
      ["files.extract", { archive: `${dir}/a\u0000.tar`, dest: `${dir}/out` }, "/archive"],
      ["files.download", { url: "http://127.0.0.1:9/x", dest: `${dir}/f\u0000` }, "/dest"],
      ["files.run", { path: `${dir}/s\u0000.sh` }, "/path"],
    ] as const) {
      const reply = await ctx.client.call(action, params);
      expect(reply.ok).toBe(false);
      expect(reply.error).toMatchObject({ code: "invalid_request", path: field });
      expect(reply.error.message).toContain("without NUL bytes");
    }
  });

  it("extracts and downloads to a 250-byte name (the temporary name is shortened), and refuses a 256-byte one saying so", async () => {
    const dir = fresh();
    writeFileSync(join(dir, "a.tar"), await buildTar([{ header: { name: "a.txt" }, data: Buffer.from("a") }]));
    const long = "x".repeat(250);
    const extracted = await ctx.client.ok("files.extract", { archive: join(dir, "a.tar"), dest: join(dir, long), wait: 30_000 });
    expect(extracted.job.state, JSON.stringify(extracted.job.error)).toBe("succeeded");
    expect(readFileSync(join(dir, long, "a.txt"), "utf8")).toBe("a");
    const { url } = await startServer({ "/f": serveBytes(Buffer.from("body")) });
    const downloaded = await ctx.client.ok("files.download", { url: `${url}/f`, dest: join(dir, `y${long}`), wait: 30_000 });
    expect(downloaded.job.state, JSON.stringify(downloaded.job.error)).toBe("succeeded");
    expect(readFileSync(join(dir, `y${long}`), "utf8")).toBe("body");
    const tooLong = "z".repeat(256);
    for (const [action, params] of [
      ["files.extract", { archive: join(dir, "a.tar"), dest: join(dir, tooLong), wait: 30_000 }],
      ["files.download", { url: `${url}/f`, dest: join(dir, tooLong), wait: 30_000 }],
    ] as const) {
      const { job } = await ctx.client.ok(action, params);
      expect(job.state).toBe("failed");
      expect(job.error).toMatchObject({ code: "invalid_request", path: "/dest" });
      expect(job.error.message).toContain("is 256 bytes long; file names may have at most 255 bytes");
    }
    expect(readdirSync(dir).sort()).toEqual(["a.tar", long, `y${long}`].sort());
  });

  it("refuses a 1.5 GiB tar.gz bomb with limit_exceeded naming the entry, leaving nothing", async () => {
    const dir = fresh();
    await writeZeroTar(join(dir, "bomb.tgz"), "zeros.bin", 1.5 * 1024 ** 3, createGzip({ level: 9 }));
    const { job } = await ctx.client.ok(
      "files.extract",
      { archive: join(dir, "bomb.tgz"), dest: join(dir, "out"), wait: 300_000 },
      310_000,
    );
    expect(job.state).toBe("failed");
    expect(job.error).toMatchObject({ code: "limit_exceeded", path: "/archive", details: { entry: "zeros.bin" } });
    expect(job.error.message).toContain("expands past 1073741824 bytes");
    expect(readdirSync(dir)).toEqual(["bomb.tgz"]);
  }, 320_000);
});
