import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ActionError } from "../../protocol/errors.js";
import { extractArchive } from "../../daemon/runners/extract/index.js";
import { ZstdWindowGuard } from "../../daemon/runners/extract/zstd-guard.js";
import { toolAvailable } from "../helpers/tools.js";
import { buildTar } from "./archive-builders.js";
import { listDir, tempDir, testContext } from "./helpers.js";

const haveZstd = toolAvailable("zstd");

function zstd(data: Buffer, ...args: string[]): Buffer {
  return execFileSync("zstd", ["-q", "-c", ...args], { input: data, maxBuffer: 64 * 1024 * 1024 });
}

function scanInSlices(bytes: Buffer, slice: number, guard = new ZstdWindowGuard()): void {
  for (let i = 0; i < bytes.length; i += slice) guard.scan(bytes.subarray(i, i + slice));
}

describe.skipIf(!haveZstd)("the zstd window guard", () => {
  it("walks real frames, concatenated frames, skippable frames and checksums in any slicing", () => {
    const mixed = Buffer.concat([randomBytes(300_000), Buffer.alloc(500_000, 1), randomBytes(1000)]);
    const skippable = Buffer.concat([Buffer.from([0x50, 0x2a, 0x4d, 0x18, 5, 0, 0, 0]), Buffer.from("hello")]);
    const stream = Buffer.concat([zstd(mixed, "-3"), skippable, zstd(Buffer.from("tail"), "--no-check"), zstd(Buffer.alloc(0))]);
    for (const slice of [1, 2, 3, 7, 1024, 1 << 20]) expect(() => scanInSlices(stream, slice)).not.toThrow();
  });

  it("refuses a frame announcing a window past the limit", () => {
    const big = zstd(Buffer.alloc(10_000), "--long=28", "--no-content-size");
    expect(() => scanInSlices(big, 1024)).toThrow(/zstd window is 268435456 bytes/);
    const forged = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0, 0x01, 0, 0]); // single segment, FCS 2 GiB
    const err = (() => {
      try {
        scanInSlices(forged, 3);
      } catch (e) {
        return e as ActionError;
      }
      return undefined;
    })();
    expect(err?.code).toBe("limit_exceeded");
  });

  it("refuses a tar.zst made with a 256 MiB window before decoding it, leaving nothing", async () => {
    const dir = await tempDir();
    await writeFile(
      join(dir, "long.tar.zst"),
      zstd(await buildTar([{ header: { name: "f" }, data: Buffer.from("x") }]), "--long=28", "--no-content-size"),
    );
    const err = (await extractArchive(testContext(), { archive: join(dir, "long.tar.zst"), dest: join(dir, "out") }).catch(
      (e: unknown) => e,
    )) as ActionError;
    expect(err.code).toBe("limit_exceeded");
    expect(err.message).toMatch(/zstd window/);
    expect(await listDir(dir)).toEqual(["long.tar.zst"]);
  });

  it("extracts a tar.zst made with zstd --long=27 (128 MiB window, full blocks): its decoding work stays within the allowed ratio", async () => {
    const dir = await tempDir();
    const content = Buffer.concat([randomBytes(3 * 1024 * 1024), Buffer.alloc(3 * 1024 * 1024, 7)]);
    await writeFile(
      join(dir, "long.tar.zst"),
      zstd(await buildTar([{ header: { name: "f" }, data: content }]), "--long=27", "--no-content-size"),
    );
    const result = await extractArchive(testContext(), { archive: join(dir, "long.tar.zst"), dest: join(dir, "out") });
    expect(result).toMatchObject({ entries: 1, bytes: content.length });
  });
});
