import { statSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { NixPreparer } from "../../daemon/nix/preparer.js";
import { toolAvailable } from "../helpers/tools.js";
import { cleanup, nixCli, recordingContext, serveDir, standinCopy, SYSTEM, tempDir } from "./helpers.js";

const hasNix = toolAvailable("nix");

describe.skipIf(!hasNix)("substitution from a local HTTP binary cache", () => {
  const dirs: string[] = [];
  let server: Server | undefined;
  afterAll(() => {
    server?.close();
    cleanup(...dirs);
  });

  it("reports download progress in bytes", async () => {
    const standin = standinCopy(`subst-${process.pid}-${Date.now()}`);
    const cache = tempDir("bincache");
    const [state, cacheDir, ws] = [tempDir("state"), tempDir("cache"), tempDir("ws")];
    dirs.push(standin, cache, state, cacheDir, ws);
    const built = nixCli(["build", "--no-link", "--json", `path:${standin}#legacyPackages.${SYSTEM}.blob`]);
    const blob = (JSON.parse(built) as Array<{ outputs: { out: string } }>)[0]!.outputs.out;
    nixCli(["copy", "--to", `file://${cache}`, blob], { stdio: "ignore" });
    nixCli(["store", "delete", blob], { stdio: "ignore" });
    expect(() => statSync(blob)).toThrow();
    server = await serveDir(cache);
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const prep = new NixPreparer({
      stateDir: state,
      cacheDir,
      defaultNixpkgs: `path:${standin}`,
      system: SYSTEM,
      daemonVersion: "test",
      nixEnv: { ...process.env, NIX_CONFIG: `substituters = ${url}\nrequire-sigs = false` },
    });
    const rec = recordingContext();
    await prep.run({ workspace: ws, packages: ["blob"] }, ws, rec.ctx);
    expect(statSync(join(blob, "share/blob.bin")).size).toBe(3_000_000);
    const bytes = rec.progress.filter((p) => p.unit === "bytes");
    expect(bytes.length).toBeGreaterThan(0);
    expect(Math.max(...bytes.map((p) => Number(p.total)))).toBeGreaterThan(1_000_000);
    expect(rec.progress.some((p) => /MiB DL/.test(p.message ?? ""))).toBe(true);
    expect(rec.output()).toContain(`copying path '${blob}' from '${url}'`);
  });
});
