import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useDaemon } from "../helpers/daemon.js";
import { readAll, scratch, sha256 } from "./helpers.js";

describe("files.read and files.write through the real daemon", () => {
  const ctx = useDaemon();

  it("round-trips text exactly, with size, mtime and the whole file's sha256", async () => {
    const dir = scratch();
    const text = "héllo\n\ttabs, quotes \"'` $HOME \\ and emoji 🎉\r\n";
    const written = await ctx.client.ok("files.write", { path: join(dir, "t.txt"), data: text });
    expect(written).toMatchObject({ path: join(dir, "t.txt"), done: true, size: Buffer.byteLength(text), sha256: sha256(text) });
    expect(readFileSync(join(dir, "t.txt"), "utf8")).toBe(text);
    const read = await ctx.client.ok("files.read", { path: join(dir, "t.txt") });
    expect(read).toMatchObject({
      data: text,
      encoding: "utf8",
      size: Buffer.byteLength(text),
      sha256: sha256(text),
      eof: true,
      offset: 0,
      next: Buffer.byteLength(text),
    });
    expect(Date.parse(read.mtime)).toBeGreaterThan(0);
  });

  it("round-trips invalid UTF-8 byte-exactly as base64", async () => {
    const dir = scratch();
    const bytes = Buffer.from([0x66, 0x6f, 0xff, 0xfe, 0x00, 0xc3, 0x28, 0xe2, 0x82]);
    await ctx.client.ok("files.write", { path: join(dir, "bad.bin"), data: bytes.toString("base64"), encoding: "base64" });
    expect(readFileSync(join(dir, "bad.bin")).equals(bytes)).toBe(true);
    const read = await ctx.client.ok("files.read", { path: join(dir, "bad.bin") });
    expect(read.encoding).toBe("base64");
    expect(Buffer.from(read.data, "base64").equals(bytes)).toBe(true);
    expect(read.sha256).toBe(sha256(bytes));
    const forced = await ctx.client.call("files.read", { path: join(dir, "bad.bin"), encoding: "utf8" });
    expect(forced.error).toMatchObject({ code: "invalid_request", path: "/encoding" });
  });

  it("round-trips a 20 MB binary file in chunks, byte-exact by sha256, never visible half-written", async () => {
    const dir = scratch();
    const body = randomBytes(20 * 1000 * 1000);
    const path = join(dir, "big.bin");
    let sawPartial = false;
    writeFileSync(path, "1"); // the old content, visible until the last chunk
    const id = (
      await ctx.client.ok("files.write", { path, data: body.subarray(0, 512 * 1024).toString("base64"), encoding: "base64", final: false })
    ).upload;
    for (let offset = 512 * 1024; offset < body.length; offset += 512 * 1024) {
      if (statSync(path).size !== 1) sawPartial = true; // the old file stays until the last chunk
      const piece = body.subarray(offset, offset + 512 * 1024);
      const reply = await ctx.client.ok("files.write", {
        path,
        upload: id,
        offset,
        data: piece.toString("base64"),
        encoding: "base64",
        final: offset + piece.length >= body.length,
      });
      if (reply.done) expect(reply).toMatchObject({ size: body.length, sha256: sha256(body) });
    }
    expect(sawPartial).toBe(false);
    expect(sha256(readFileSync(path))).toBe(sha256(body));
    expect(readdirSync(dir)).toEqual(["big.bin"]); // no temporary file left
    const { bytes, last } = await readAll(ctx.client, path);
    expect(bytes.length).toBe(body.length);
    expect(sha256(bytes)).toBe(sha256(body));
    expect(last.sha256).toBe(sha256(body));
    // Out of order (a slice in the middle, then the end): the end still carries the right hash.
    const tail = await ctx.client.ok("files.read", { path, offset: body.length - 10 });
    expect(tail).toMatchObject({ eof: true, sha256: sha256(body) });
  });

  it("sends the bytes raw in a binary frame right after the reply with binary: true", async () => {
    const dir = scratch();
    const body = randomBytes(3 * 1024 * 1024 + 5);
    writeFileSync(join(dir, "raw.bin"), body);
    const pieces: Buffer[] = [];
    let last: Record<string, any> = {};
    for (let offset = 0; !last.eof; offset = last.next) {
      last = await ctx.client.ok("files.read", { path: join(dir, "raw.bin"), offset, binary: true });
      expect(last).toMatchObject({ data: "", encoding: "binary", offset });
      const frame = await ctx.client.waitFor(
        (f) => f.event === "files.data" && f.path === join(dir, "raw.bin") && f.offset === offset,
        10_000,
        `files.data at ${offset}`,
      );
      expect(frame.bytes.length).toBe(last.next - offset);
      pieces.push(frame.bytes);
    }
    expect(sha256(Buffer.concat(pieces))).toBe(sha256(body));
    expect(last.sha256).toBe(sha256(body));
  });

  it("applies pipelined chunks in the order they were sent", async () => {
    const dir = scratch();
    const path = join(dir, "piped.bin");
    const body = randomBytes(40 * 64 * 1024);
    const piece = 64 * 1024;
    const first = await ctx.client.ok("files.write", {
      path,
      data: body.subarray(0, piece).toString("base64"),
      encoding: "base64",
      final: false,
    });
    const replies = await Promise.all(
      Array.from({ length: body.length / piece - 1 }, (_, i) => {
        const offset = (i + 1) * piece;
        return ctx.client.ok("files.write", {
          path,
          upload: first.upload,
          offset,
          data: body.subarray(offset, offset + piece).toString("base64"),
          encoding: "base64",
          final: offset + piece >= body.length,
        });
      }),
    );
    expect(replies.at(-1)).toMatchObject({ done: true, size: body.length, sha256: sha256(body) });
    expect(sha256(readFileSync(path))).toBe(sha256(body));
  });

  it("refuses a chunk at the wrong offset with the received count, and an unknown upload", async () => {
    const dir = scratch();
    const path = join(dir, "c.txt");
    const first = await ctx.client.ok("files.write", { path, data: "abc", final: false });
    const wrong = await ctx.client.call("files.write", { path, upload: first.upload, offset: 5, data: "x" });
    expect(wrong.error).toMatchObject({ code: "conflict", path: "/offset", details: { received: 3 } });
    const done = await ctx.client.ok("files.write", { path, upload: first.upload, offset: 3, data: "def" });
    expect(done).toMatchObject({ done: true, size: 6 });
    expect(readFileSync(path, "utf8")).toBe("abcdef");
    const gone = await ctx.client.call("files.write", { path, upload: first.upload, offset: 6, data: "g" });
    expect(gone.error).toMatchObject({ code: "not_found", path: "/upload" });
  });

  it("removes an unfinished upload's temporary file when its connection closes", async () => {
    const dir = scratch();
    const other = await ctx.daemon.client();
    await other.ok("files.write", { path: join(dir, "x.bin"), data: "partial", final: false });
    expect(readdirSync(dir).filter((n) => n.endsWith(".tmp"))).toHaveLength(1);
    await other.close();
    await ctx.client.ok("state.info"); // the close has been handled by the time a later request is answered
    for (let i = 0; i < 50 && readdirSync(dir).length > 0; i++) await ctx.client.ok("state.info");
    expect(readdirSync(dir)).toEqual([]);
  });

  it("writers with the same ifMatch: exactly one succeeds, the others get conflict naming the current sha256", async () => {
    const dir = scratch();
    const path = join(dir, "shared.bin");
    const v0 = randomBytes(4 * 1024 * 1024); // hashing it takes long enough for the writers to overlap
    writeFileSync(path, v0);
    const base = sha256(v0);
    const clients = [ctx.client, ...(await Promise.all(Array.from({ length: 5 }, () => ctx.daemon.client())))];
    const replies = await Promise.all(clients.map((c, i) => c.call("files.write", { path, data: `from writer ${i}\n`, ifMatch: base })));
    await Promise.all(clients.slice(1).map((c) => c.close()));
    const wins = replies.filter((r) => r.ok);
    const losses = replies.filter((r) => !r.ok);
    expect(wins).toHaveLength(1);
    expect(losses).toHaveLength(clients.length - 1);
    const content = readFileSync(path, "utf8");
    expect(wins[0]!.result.sha256).toBe(sha256(content));
    for (const loss of losses)
      expect(loss.error).toMatchObject({ code: "conflict", path: "/ifMatch", details: { current: sha256(content) } });
    const absent = await ctx.client.call("files.write", { path, data: "new", ifMatch: "absent" });
    expect(absent.error).toMatchObject({ code: "conflict", details: { current: sha256(content) } });
    expect((await ctx.client.ok("files.write", { path: join(dir, "fresh"), data: "n", ifMatch: "absent" })).done).toBe(true);
  });

  it("keeps the mode of a replaced file, sets a given one, and creates parents only when asked", async () => {
    const dir = scratch();
    writeFileSync(join(dir, "run.sh"), "echo 1\n", { mode: 0o750 });
    await ctx.client.ok("files.write", { path: join(dir, "run.sh"), data: "echo 2\n" });
    expect(statSync(join(dir, "run.sh")).mode & 0o777).toBe(0o750);
    await ctx.client.ok("files.write", { path: join(dir, "run.sh"), data: "echo 3\n", mode: "0700" });
    expect(statSync(join(dir, "run.sh")).mode & 0o777).toBe(0o700);
    const noParent = await ctx.client.call("files.write", { path: join(dir, "a/b/c.txt"), data: "x" });
    expect(noParent.error).toMatchObject({ code: "not_found", path: "/path" });
    expect(noParent.error.message).toContain("parents: true");
    await ctx.client.ok("files.write", { path: join(dir, "a/b/c.txt"), data: "x", parents: true });
    expect(readFileSync(join(dir, "a/b/c.txt"), "utf8")).toBe("x");
  });

  it("reads large files in slices cut at character boundaries, with offset and next", async () => {
    const dir = scratch();
    const text = "é".repeat(1000); // 2 bytes each
    writeFileSync(join(dir, "e.txt"), text);
    const first = await ctx.client.ok("files.read", { path: join(dir, "e.txt"), limit: 101 });
    expect(first).toMatchObject({ encoding: "utf8", offset: 0, next: 100, eof: false });
    expect(first.sha256).toBeUndefined();
    const { bytes, last } = await readAll(ctx.client, join(dir, "e.txt"), 333);
    expect(bytes.toString("utf8")).toBe(text);
    expect(last.sha256).toBe(sha256(text));
  });

  it("writes through a symlink only when it points inside the named directory", async () => {
    const dir = scratch();
    const outside = scratch();
    writeFileSync(join(dir, "real.txt"), "old");
    symlinkSync("real.txt", join(dir, "inside-link"));
    symlinkSync(join(outside, "victim.txt"), join(dir, "outside-link"));
    writeFileSync(join(outside, "victim.txt"), "keep");
    await ctx.client.ok("files.write", { path: join(dir, "inside-link"), data: "new" });
    expect(readFileSync(join(dir, "real.txt"), "utf8")).toBe("new");
    expect(statSync(join(dir, "inside-link")).isFile()).toBe(true); // still a link to it (stat follows)
    const refused = await ctx.client.call("files.write", { path: join(dir, "outside-link"), data: "evil" });
    expect(refused.error).toMatchObject({ code: "invalid_request", path: "/path" });
    expect(refused.error.message).toContain("outside");
    expect(readFileSync(join(outside, "victim.txt"), "utf8")).toBe("keep");
    // Reads follow links.
    expect((await ctx.client.ok("files.read", { path: join(dir, "outside-link") })).data).toBe("keep");
  });

  it("refuses the daemon's own directories to every file action, and observe tokens entirely", async () => {
    const token = join(ctx.daemon.dirs.config, "token");
    const outside = scratch();
    for (const [action, params, code] of [
      ["files.read", { path: token }, "forbidden"],
      ["files.write", { path: join(ctx.daemon.dirs.config, "x"), data: "x" }, "forbidden"],
      ["files.list", { path: ctx.daemon.dirs.state }, "forbidden"],
      ["files.stat", { path: join(ctx.daemon.dirs.cache, "..", "cache") }, "forbidden"],
      ["files.search", { path: ctx.daemon.dirs.config, pattern: "a" }, "forbidden"],
      ["files.watch", { path: ctx.daemon.dirs.config }, "forbidden"],
      ["files.move", { from: ctx.daemon.dirs.config, to: join(outside, "stolen") }, "forbidden"],
      ["files.edit", { path: token, edits: [{ old: "a", new: "b" }] }, "forbidden"],
      // The home directory (here the test root) holds them: a tree operation on it is refused too.
      ["files.remove", { path: ctx.daemon.dirs.root, recursive: true }, "invalid_request"],
    ] as const) {
      const reply = await ctx.client.call(action, params);
      expect(reply.error?.code, `${action} ${JSON.stringify(params)}`).toBe(code);
    }
    expect(existsSync(token)).toBe(true);
    const dir = scratch();
    symlinkSync(token, join(dir, "token-link"));
    expect((await ctx.client.call("files.read", { path: join(dir, "token-link") })).error).toMatchObject({ code: "forbidden" });
    const { token: observe } = await ctx.client.ok("tokens.create", { scope: "observe" });
    const watcher = await ctx.daemon.client({}, observe);
    expect((await watcher.call("files.read", { path: join(dir, "token-link") })).error).toMatchObject({ code: "forbidden" });
    await watcher.close();
  });
});
