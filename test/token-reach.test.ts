import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useDaemon } from "./helpers/daemon.js";

/**
 * Jobs run as the daemon's user and can read its token file. The daemon does not pretend
 * otherwise: the guide and README say so, and say that a manage token is as strong as the file.
 */

const ROOT = new URL("../", import.meta.url).pathname;
const docs = (file: string): string => readFileSync(join(ROOT, file), "utf8").replace(/\s+/g, " ");

describe("what a job can reach", () => {
  const ctx = useDaemon();

  it("a job can read the token file, and the guide and README say so instead of promising containment", async () => {
    const path = join(ctx.daemon.dirs.config, "token");
    const { output } = await ctx.client.ok("shell", { command: `cat ${path}`, wait: 20_000 });
    expect(output.data.trim()).toBe(ctx.daemon.token); // the fact the documents must not deny
    for (const file of ["guide/00-intro.md", "README.md"]) {
      const text = docs(file);
      expect(text, file).not.toMatch(/no job ever sees/i); // before: guide/00-intro.md promised it
      expect(text, file).toMatch(
        /manage` token (—|-) or a `manage` browser link — is as strong as the token file|manage` token is as strong as the token file/,
      );
      expect(text, file).toMatch(/can read the token file|can read `<config>\/token`/);
    }
  });
});
