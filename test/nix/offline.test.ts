import { afterAll, describe, expect, it } from "vitest";
import { type TestDaemon, withDaemon } from "../helpers/daemon.js";
import { toolAvailable } from "../helpers/tools.js";
import { cleanup, tempDir } from "./helpers.js";

const hasNix = toolAvailable("nix");
/** A pin no network can fetch: `.invalid` never resolves (RFC 2606), as every host does offline. */
const UNREACHABLE_PIN = "https://nixpkgs.invalid/nixpkgs-unstable.tar.gz";

describe.skipIf(!hasNix)("prepare when the nixpkgs pin cannot be downloaded (real nix)", () => {
  const dirs: string[] = [];
  afterAll(() => cleanup(...dirs));

  it("names the cause (no network to fetch the pin) and the ways out, not a broken Nix installation", { timeout: 120_000 }, async () => {
    const ws = tempDir("offline-ws");
    dirs.push(ws);
    // One download attempt: Nix's retries with back-off add nothing here but time.
    await withDaemon({ env: { HOTLINE_NIXPKGS: UNREACHABLE_PIN, NIX_CONFIG: "download-attempts = 1" } }, async (_d: TestDaemon, c) => {
      const reply = await c.ok("prepare", { workspace: ws, packages: ["hello"] }, 60_000);
      const { job } = await c.ok("jobs.wait", { job: reply.job.id, timeoutMs: 90_000 }, 100_000);
      expect(job.state).toBe("failed");
      expect(job.error).toMatchObject({ code: "unavailable", details: { url: UNREACHABLE_PIN } });
      const message = job.error.message as string;
      expect(message).toContain(`Nix cannot download ${UNREACHABLE_PIN}: Couldn't resolve host name`);
      expect(message).toContain("no network to fetch it");
      expect(message).toContain("binary cache");
      expect(message).toContain("HOTLINE_NIXPKGS=path:");
      expect(message).not.toContain("fix the Nix installation");
    });
  });
});
