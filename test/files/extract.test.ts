import { execFileSync } from "node:child_process";
import { chmod, mkdir, readFile, stat, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createGzip } from "node:zlib";
import { describe, expect, it } from "vitest";
import { ActionError } from "../../protocol/errors.js";
import { extractArchive, type ExtractOptions } from "../../daemon/runners/extract/index.js";
import { toolAvailable } from "../helpers/tools.js";
import { buildTar, buildZip, writeZeroTar } from "./archive-builders.js";
import { listDir, tempDir, testContext } from "./helpers.js";

const MTIME = new Date("2024-03-04T05:06:07Z");
const haveZip = toolAvailable("zip", ["-v"]);
const haveXz = toolAvailable("xz");
const haveZstd = toolAvailable("zstd");

/** A small source tree: a nested text file, an executable, a unicode name, with fixed mtimes. */
async function sourceTree(root: string): Promise<string> {
  const src = join(root, "pkg-1.0");
  await mkdir(join(src, "bin"), { recursive: true });
  await mkdir(join(src, "docs", "ünï"), { recursive: true });
  await writeFile(join(src, "README"), "hello\n");
  await writeFile(join(src, "bin", "tool"), "#!/bin/sh\necho hi\n");
  await chmod(join(src, "bin", "tool"), 0o755);
  await writeFile(join(src, "docs", "ünï", "世界.txt"), "unicode\n");
  for (const p of ["README", "bin/tool", "docs/ünï/世界.txt"]) await utimes(join(src, p), MTIME, MTIME);
  return src;
}

async function expectTree(dest: string, prefix = "pkg-1.0/"): Promise<void> {
  expect(await readFile(join(dest, `${prefix}README`), "utf8")).toBe("hello\n");
  const tool = await stat(join(dest, `${prefix}bin/tool`));
  expect(tool.mode & 0o777).toBe(0o755);
  expect((await stat(join(dest, `${prefix}README`))).mode & 0o111).toBe(0);
  expect(Math.round(tool.mtimeMs / 1000)).toBe(MTIME.getTime() / 1000);
  expect(await readFile(join(dest, `${prefix}docs/ünï/世界.txt`), "utf8")).toBe("unicode\n");
}

/** Runs an extraction expected to fail; checks the error, that dest is absent and the parent holds only `keep`. */
async function expectRefused(
  opts: ExtractOptions,
  match: { code?: string; entry?: string; message?: RegExp },
  keep: string[],
): Promise<ActionError> {
  const err = await extractArchive(testContext(), opts).then(
    () => {
      throw new Error("extraction should have been refused");
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ActionError);
  const a = err as ActionError;
  expect(a.code).toBe(match.code ?? "invalid_request");
  if (match.entry !== undefined) {
    expect(a.details).toMatchObject({ entry: match.entry });
    expect(a.message).toContain(JSON.stringify(match.entry));
  }
  if (match.message) expect(a.message).toMatch(match.message);
  expect(await listDir(join(opts.dest, ".."))).toEqual(keep.sort());
  return a;
}

describe("extractArchive: formats", () => {
  const cases: [string, string[] | null, boolean][] = [
    ["a.tar", ["-cf"], true],
    ["a.tar.gz", ["-czf"], true],
    ["a.tar.xz", ["-cJf"], haveXz],
    ["a.tar.zst", ["--zstd", "-cf"], haveZstd],
  ];
  for (const [name, flags, available] of cases) {
    it.skipIf(!available)(`extracts ${name} made by GNU tar, keeping modes and mtimes`, async () => {
      const dir = await tempDir();
      await sourceTree(dir);
      execFileSync("tar", [...flags!, join(dir, name), "-C", dir, "pkg-1.0"]);
      const ctx = testContext();
      const result = await extractArchive(ctx, { archive: join(dir, name), dest: join(dir, "out") });
      expect(result.format).toBe(name.slice(2));
      expect(result.bytes).toBe(6 + 18 + 8);
      await expectTree(join(dir, "out"));
      expect(await listDir(dir)).toEqual([name, "out", "pkg-1.0"].sort());
      const last = ctx.updates.at(-1)!;
      expect(last).toMatchObject({ phase: "extract", unit: "bytes" });
      expect(last.done).toBe(last.total);
      expect(last.total).toBe((await stat(join(dir, name))).size);
    });
  }

  it.skipIf(!haveZip)("extracts a zip made by Info-ZIP, with strip", async () => {
    const dir = await tempDir();
    await sourceTree(dir);
    execFileSync("zip", ["-qr", join(dir, "a.zip"), "pkg-1.0"], { cwd: dir });
    const result = await extractArchive(testContext(), { archive: join(dir, "a.zip"), dest: join(dir, "out"), strip: 1 });
    expect(result.format).toBe("zip");
    await expectTree(join(dir, "out"), "");
  });

  it("applies strip to tar entries and skips what it consumes", async () => {
    const dir = await tempDir();
    await sourceTree(dir);
    const large = Buffer.alloc(700_000, 7); // past the in-memory threshold: streamed to disk
    await writeFile(join(dir, "pkg-1.0", "large.bin"), large);
    execFileSync("tar", ["-czf", join(dir, "a.tgz"), "-C", dir, "pkg-1.0"]);
    await extractArchive(testContext(), { archive: join(dir, "a.tgz"), dest: join(dir, "out"), strip: 1 });
    await expectTree(join(dir, "out"), "");
    expect(await listDir(join(dir, "out"))).toEqual(["README", "bin", "docs", "large.bin"]);
    expect((await readFile(join(dir, "out", "large.bin"))).equals(large)).toBe(true);
  });

  it("drops setuid/setgid bits and keeps only rwx", async () => {
    const dir = await tempDir();
    await writeFile(
      join(dir, "a.tar"),
      await buildTar([{ header: { name: "suid", mode: 0o6755, uid: 0, gid: 0, uname: "root" }, data: Buffer.from("x") }]),
    );
    await extractArchive(testContext(), { archive: join(dir, "a.tar"), dest: join(dir, "out") });
    expect((await stat(join(dir, "out", "suid"))).mode & 0o7777).toBe(0o755);
  });

  it("a name listed twice ends as its last entry, content and mode; a mode the umask would take is still applied", async () => {
    const dir = await tempDir();
    await writeFile(
      join(dir, "a.tar"),
      await buildTar([
        { header: { name: "twice", mode: 0o755 }, data: Buffer.from("first, longer") },
        { header: { name: "twice", mode: 0o600 }, data: Buffer.from("second") },
        { header: { name: "shared", mode: 0o666 }, data: Buffer.from("x") },
      ]),
    );
    await extractArchive(testContext(), { archive: join(dir, "a.tar"), dest: join(dir, "out") });
    expect(await readFile(join(dir, "out", "twice"), "utf8")).toBe("second");
    expect((await stat(join(dir, "out", "twice"))).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, "out", "shared"))).mode & 0o777).toBe(0o666);
  });

  it("refuses a format that contradicts the magic bytes, and unknown files", async () => {
    const dir = await tempDir();
    await writeFile(join(dir, "a.zip"), buildZip([{ name: "x", data: Buffer.from("x") }]));
    await expectRefused(
      { archive: join(dir, "a.zip"), dest: join(dir, "out"), format: "tar.gz" },
      { message: /looks like zip, not tar\.gz/ },
      ["a.zip"],
    );
    await writeFile(join(dir, "notes.txt"), "just text");
    await expectRefused({ archive: join(dir, "notes.txt"), dest: join(dir, "out") }, { message: /not a tar, tar\.gz/ }, [
      "a.zip",
      "notes.txt",
    ]);
  });
});

describe("extractArchive: hostile archives leave no trace", () => {
  const tarCases: [string, Parameters<typeof buildTar>[0], string, RegExp][] = [
    ["../x", [{ header: { name: "../x" }, data: Buffer.from("x") }], "../x", /leaves the destination/],
    [
      "a/../../x",
      [
        { header: { name: "ok" }, data: Buffer.from("fine") },
        { header: { name: "a/../../x" }, data: Buffer.from("x") },
      ],
      "a/../../x",
      /leaves the destination/,
    ],
    ["absolute", [{ header: { name: "/etc/evil" }, data: Buffer.from("x") }], "/etc/evil", /absolute path/],
    ["backslash traversal", [{ header: { name: "a\\..\\..\\x" }, data: Buffer.from("x") }], "a\\..\\..\\x", /leaves the destination/],
    ["symlink", [{ header: { name: "link", type: "symlink", linkname: "/etc/passwd" } }], "link", /symbolic links/],
    [
      "hardlink",
      [{ header: { name: "f" }, data: Buffer.from("x") }, { header: { name: "hard", type: "link", linkname: "f" } }],
      "hard",
      /hard links/,
    ],
    ["fifo", [{ header: { name: "pipe", type: "fifo" } }], "pipe", /FIFOs/],
    ["char device", [{ header: { name: "null", type: "character-device", devmajor: 1, devminor: 3 } }], "null", /character devices/],
    ["block device", [{ header: { name: "sda", type: "block-device", devmajor: 8, devminor: 0 } }], "sda", /block devices/],
  ];
  for (const [label, entries, entry, why] of tarCases) {
    it(`refuses a tar with ${label}, naming the entry`, async () => {
      const dir = await tempDir();
      await writeFile(join(dir, "a.tar"), await buildTar(entries));
      await expectRefused({ archive: join(dir, "a.tar"), dest: join(dir, "out") }, { entry, message: why }, ["a.tar"]);
    });
  }

  it("refuses entries that clash with earlier ones (a file where a directory must go), naming them", async () => {
    const dir = await tempDir();
    await writeFile(
      join(dir, "a.tar"),
      await buildTar([{ header: { name: "a" }, data: Buffer.from("x") }, { header: { name: "a/b", type: "directory" } }]),
    );
    await expectRefused(
      { archive: join(dir, "a.tar"), dest: join(dir, "out") },
      { entry: "a/b", message: /clashes with an earlier entry/ },
      ["a.tar"],
    );
    await writeFile(
      join(dir, "b.zip"),
      buildZip([
        { name: "d/", unixMode: 0o040755 },
        { name: "d", data: Buffer.from("x") },
      ]),
    );
    await expectRefused({ archive: join(dir, "b.zip"), dest: join(dir, "out") }, { entry: "d", message: /clashes with an earlier entry/ }, [
      "a.tar",
      "b.zip",
    ]);
  });

  it("refuses traversal that only appears after strip", async () => {
    const dir = await tempDir();
    await writeFile(
      join(dir, "a.tar"),
      await buildTar([
        { header: { name: "top/ok" }, data: Buffer.from("x") },
        { header: { name: "top/../../x" }, data: Buffer.from("x") },
      ]),
    );
    await expectRefused(
      { archive: join(dir, "a.tar"), dest: join(dir, "out"), strip: 1 },
      { entry: "top/../../x", message: /leaves the destination/ },
      ["a.tar"],
    );
  });

  const zipCases: [string, Parameters<typeof buildZip>[0], string, RegExp][] = [
    ["../x", [{ name: "../x", data: Buffer.from("x") }], "../x", /leaves the destination/],
    [
      "backslash traversal",
      [
        { name: "ok.txt", data: Buffer.from("ok") },
        { name: "a\\..\\..\\evil", data: Buffer.from("x") },
      ],
      "a/../../evil",
      /leaves the destination/,
    ],
    ["a drive letter", [{ name: "C:\\Windows\\evil", data: Buffer.from("x") }], "C:/Windows/evil", /absolute path/],
    ["absolute", [{ name: "/etc/evil", data: Buffer.from("x") }], "/etc/evil", /absolute path/],
    ["symlink", [{ name: "link", data: Buffer.from("/etc/passwd"), unixMode: 0o120777 }], "link", /symbolic links/],
    ["FIFO", [{ name: "pipe", unixMode: 0o010644 }], "pipe", /FIFOs/],
    ["char device", [{ name: "tty", unixMode: 0o020644 }], "tty", /character devices/],
  ];
  for (const [label, entries, entry, why] of zipCases) {
    it(`refuses a zip with ${label}, naming the entry`, async () => {
      const dir = await tempDir();
      await writeFile(join(dir, "a.zip"), buildZip(entries));
      await expectRefused({ archive: join(dir, "a.zip"), dest: join(dir, "out") }, { entry, message: why }, ["a.zip"]);
    });
  }

  it("refuses a zip whose headers lie about an entry's size", async () => {
    const dir = await tempDir();
    const data = Buffer.alloc(100_000, 65);
    await writeFile(
      join(dir, "small-claim.zip"),
      buildZip([
        { name: "ok", data: Buffer.from("ok") },
        { name: "liar.bin", data, declaredSize: 10 },
      ]),
    );
    await expectRefused(
      { archive: join(dir, "small-claim.zip"), dest: join(dir, "out") },
      { entry: "liar.bin", message: /headers lie about its size/ },
      ["small-claim.zip"],
    );
    await writeFile(join(dir, "big-claim.zip"), buildZip([{ name: "liar2.bin", data: Buffer.from("short"), declaredSize: 5000 }]));
    await expectRefused(
      { archive: join(dir, "big-claim.zip"), dest: join(dir, "out") },
      { entry: "liar2.bin", message: /headers lie about its size/ },
      ["big-claim.zip", "small-claim.zip"],
    );
  });

  it("refuses lying sizes on large (streamed) zip entries too", async () => {
    const dir = await tempDir();
    const big = Buffer.alloc(600_000);
    await writeFile(join(dir, "under.zip"), buildZip([{ name: "under.bin", data: big, declaredSize: 300_000 }]));
    await expectRefused(
      { archive: join(dir, "under.zip"), dest: join(dir, "out") },
      { entry: "under.bin", message: /headers lie about its size/ },
      ["under.zip"],
    );
    await writeFile(join(dir, "over.zip"), buildZip([{ name: "over.bin", data: big, declaredSize: 900_000 }]));
    await expectRefused(
      { archive: join(dir, "over.zip"), dest: join(dir, "out") },
      { entry: "over.bin", message: /headers lie about its size/ },
      ["over.zip", "under.zip"],
    );
    await writeFile(join(dir, "honest.zip"), buildZip([{ name: "honest.bin", data: big }]));
    await expectRefused(
      { archive: join(dir, "honest.zip"), dest: join(dir, "out"), limits: { maxBytes: 500_000 } },
      { code: "limit_exceeded", entry: "honest.bin" },
      ["honest.zip", "over.zip", "under.zip"],
    );
    await extractArchive(testContext(), { archive: join(dir, "honest.zip"), dest: join(dir, "ok") });
    expect((await readFile(join(dir, "ok", "honest.bin"))).equals(big)).toBe(true);
  });

  it("counts inflated bytes against a small limit, in tar.gz and zip", async () => {
    const dir = await tempDir();
    await writeZeroTar(join(dir, "z.tgz"), "zeros", 5000, createGzip());
    await expectRefused(
      { archive: join(dir, "z.tgz"), dest: join(dir, "out"), limits: { maxBytes: 4096 } },
      { code: "limit_exceeded", entry: "zeros", message: /expands past 4096 bytes/ },
      ["z.tgz"],
    );
    await writeFile(
      join(dir, "z.zip"),
      buildZip([
        { name: "a", data: Buffer.alloc(3000) },
        { name: "b", data: Buffer.alloc(3000) },
      ]),
    );
    await expectRefused(
      { archive: join(dir, "z.zip"), dest: join(dir, "out"), limits: { maxBytes: 4096 } },
      { code: "limit_exceeded", entry: "b" },
      ["z.tgz", "z.zip"],
    );
  });

  it("allows exactly the byte limit and refuses one byte more", async () => {
    const dir = await tempDir();
    await writeZeroTar(join(dir, "exact.tgz"), "zeros", 5000, createGzip());
    await extractArchive(testContext(), { archive: join(dir, "exact.tgz"), dest: join(dir, "ok"), limits: { maxBytes: 5000 } });
    expect((await stat(join(dir, "ok", "zeros"))).size).toBe(5000);
    await expectRefused(
      { archive: join(dir, "exact.tgz"), dest: join(dir, "out"), limits: { maxBytes: 4999 } },
      { code: "limit_exceeded", entry: "zeros" },
      ["exact.tgz", "ok"],
    );
  });

  it("refuses an archive with too many entries", async () => {
    const dir = await tempDir();
    await writeFile(
      join(dir, "many.tar"),
      await buildTar(Array.from({ length: 20 }, (_, i) => ({ header: { name: `f${i}` }, data: Buffer.from("x") }))),
    );
    await expectRefused(
      { archive: join(dir, "many.tar"), dest: join(dir, "out"), limits: { maxEntries: 10 } },
      { code: "limit_exceeded", entry: "f10", message: /more than 10 entries/ },
      ["many.tar"],
    );
    await writeFile(join(dir, "many.zip"), buildZip(Array.from({ length: 20 }, (_, i) => ({ name: `f${i}`, data: Buffer.from("x") }))));
    await expectRefused(
      { archive: join(dir, "many.zip"), dest: join(dir, "out"), limits: { maxEntries: 10 } },
      { code: "limit_exceeded", message: /lists 20 entries, more than 10/ },
      ["many.tar", "many.zip"],
    );
  });

  it("refuses truncated tar, tar.gz and zip archives", async () => {
    const dir = await tempDir();
    await sourceTree(dir);
    await writeFile(join(dir, "big"), Buffer.alloc(300_000, 1));
    execFileSync("tar", ["-czf", join(dir, "full.tgz"), "-C", dir, "pkg-1.0", "big"]);
    execFileSync("tar", ["-cf", join(dir, "full.tar"), "-C", dir, "pkg-1.0", "big"]);
    const zip = buildZip([{ name: "a", data: Buffer.alloc(5000, 3) }]);
    const tgz = await readFile(join(dir, "full.tgz"));
    const tar = await readFile(join(dir, "full.tar"));
    await writeFile(join(dir, "cut.tgz"), tgz.subarray(0, Math.floor(tgz.length / 2)));
    await writeFile(join(dir, "cut.tar"), tar.subarray(0, tar.length - 200_000));
    await writeFile(join(dir, "cut.zip"), zip.subarray(0, zip.length - 30));
    const keep = await listDir(dir);
    for (const name of ["cut.tgz", "cut.tar", "cut.zip"]) {
      await expectRefused({ archive: join(dir, name), dest: join(dir, "out") }, { message: /damaged or truncated/ }, keep);
    }
  });

  it.skipIf(!haveXz)("refuses an xz archive whose dictionary is past the decoder's memory limit", async () => {
    const dir = await tempDir();
    const tar = await buildTar([{ header: { name: "f" }, data: Buffer.from("x") }]);
    await writeFile(join(dir, "big-dict.tar.xz"), execFileSync("xz", ["-c", "--lzma2=dict=1536MiB"], { input: tar }));
    await expectRefused(
      { archive: join(dir, "big-dict.tar.xz"), dest: join(dir, "out") },
      { code: "limit_exceeded", message: /xz dictionary/ },
      ["big-dict.tar.xz"],
    );
  });

  it("refuses a destination that exists", async () => {
    const dir = await tempDir();
    await writeFile(join(dir, "a.tar"), await buildTar([{ header: { name: "f" }, data: Buffer.from("x") }]));
    await mkdir(join(dir, "out"));
    await expectRefused({ archive: join(dir, "a.tar"), dest: join(dir, "out") }, { code: "conflict" }, ["a.tar", "out"]);
    expect(await listDir(join(dir, "out"))).toEqual([]);
  });

  it("extracts unicode names from tar and zip", async () => {
    const dir = await tempDir();
    const names = ["naïve/日本語.txt", "emoji-🎉.md"];
    await writeFile(join(dir, "u.tar"), await buildTar(names.map((name) => ({ header: { name }, data: Buffer.from(name) }))));
    await writeFile(join(dir, "u.zip"), buildZip(names.map((name) => ({ name, data: Buffer.from(name) }))));
    for (const a of ["u.tar", "u.zip"]) {
      await extractArchive(testContext(), { archive: join(dir, a), dest: join(dir, `out-${a}`) });
      for (const n of names) expect(await readFile(join(dir, `out-${a}`, n), "utf8")).toBe(n);
    }
  });

  it("removes the temporary directory when cancelled", async () => {
    const dir = await tempDir();
    await writeZeroTar(join(dir, "z.tgz"), "zeros", 50_000_000, createGzip({ level: 1 }));
    const ctx = testContext();
    ctx.onProgress = () => ctx.controller.abort(new Error("cancelled by test"));
    await expect(extractArchive(ctx, { archive: join(dir, "z.tgz"), dest: join(dir, "out") })).rejects.toThrow("cancelled by test");
    expect(await listDir(dir)).toEqual(["z.tgz"]);
  });
});
