import { join } from "node:path";
import { createGzip } from "node:zlib";
import { describe, expect, it } from "vitest";
import { ActionError } from "../../protocol/errors.js";
import { extractArchive } from "../../daemon/runners/extract/index.js";
import { writeZeroTar } from "./archive-builders.js";
import { listDir, tempDir, testContext } from "./helpers.js";

const GIB = 1024 ** 3;

describe("extractArchive: the real 1 GiB limit", () => {
  it("refuses a tar.gz that inflates to 1 GiB + 1 byte of zeros, with the default limit, leaving nothing", async () => {
    const dir = await tempDir();
    await writeZeroTar(join(dir, "bomb.tgz"), "zeros.bin", GIB + 1, createGzip({ level: 1 }));
    const err = await extractArchive(testContext(), { archive: join(dir, "bomb.tgz"), dest: join(dir, "out") }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ActionError);
    expect((err as ActionError).code).toBe("limit_exceeded");
    expect((err as ActionError).details).toEqual({ entry: "zeros.bin" });
    expect((err as ActionError).message).toContain(`expands past ${GIB} bytes`);
    expect(await listDir(dir)).toEqual(["bomb.tgz"]);
  });
});
