import { randomBytes } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { newDirs, TestDaemon } from "../helpers/daemon.js";
import { CHUNK, scratch, sha256 } from "./helpers.js";

describe("a crash during files.write", () => {
  it("leaves the old content or the new, never a mix (kill -9 at three points of a 16 MiB chunked upload)", async () => {
    const dir = scratch();
    const path = join(dir, "data.bin");
    const old = randomBytes(3 * 1024 * 1024);
    const next = randomBytes(16 * 1024 * 1024);
    const dirs = newDirs();
    // Kill points: after half the chunks; right as the final chunk is sent; just after its reply.
    for (const killAt of ["middle", "final-sent", "final-done"] as const) {
      writeFileSync(path, old);
      const daemon = await TestDaemon.start({ dirs });
      const client = await daemon.client();
      let id: string | undefined;
      for (let offset = 0; offset < next.length; offset += CHUNK) {
        const final = offset + CHUNK >= next.length;
        const params = {
          path,
          data: next.subarray(offset, offset + CHUNK).toString("base64"),
          encoding: "base64",
          final,
          ...(id ? { upload: id, offset } : {}),
        };
        if (killAt === "middle" && offset >= next.length / 2) break;
        if (final && killAt === "final-sent") {
          client.sendRaw(JSON.stringify({ id: "last", action: "files.write", ...params }));
          break;
        }
        const reply = await client.ok("files.write", params);
        id = reply.upload as string | undefined;
      }
      await daemon.kill();
      await client.close();
      const now = sha256(readFileSync(path));
      if (killAt === "final-done") expect(now).toBe(sha256(next));
      else if (killAt === "middle") expect(now).toBe(sha256(old));
      else expect([sha256(old), sha256(next)]).toContain(now);
    }
    rmSync(dirs.root, { recursive: true, force: true });
  });
});
