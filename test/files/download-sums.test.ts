import { createHash, randomBytes } from "node:crypto";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { downloadFile } from "../../daemon/runners/download.js";
import { findSha256 } from "../../daemon/runners/checksum-file.js";
import { downloadGithubAsset } from "../../daemon/runners/github-release.js";
import { listDir, rejection, serveBytes, startServer, tempDir, testContext, type Route } from "./helpers.js";

const BODY = randomBytes(300_000);
const SHA = createHash("sha256").update(BODY).digest("hex");
const OTHER = "b".repeat(64);
const text =
  (body: string): Route =>
  (_q, res) =>
    res.writeHead(200, { "content-type": "text/plain" }).end(body);

describe("files.download with the hash from a sums file", () => {
  it("takes the hash for the URL's file name from a SHA256SUMS and fetches the sums file before the body", async () => {
    const order: string[] = [];
    const srv = await startServer({
      "/v1/SHA256SUMS": (q, s) => {
        order.push("sums");
        text(`${OTHER}  tool-darwin.tar.gz\n${SHA.toUpperCase()} *tool-linux.tar.gz\n`)(q, s);
      },
      "/v1/tool-linux.tar.gz": (q, s) => {
        order.push("body");
        serveBytes(BODY)(q, s);
      },
    });
    const dir = await tempDir();
    const ctx = testContext();
    const r = await downloadFile(ctx, {
      url: `${srv.url}/v1/tool-linux.tar.gz`,
      dest: `${dir}/`,
      sha256sums: { url: `${srv.url}/v1/SHA256SUMS` },
    });
    expect(r).toMatchObject({ path: join(dir, "tool-linux.tar.gz"), sha256: SHA, size: BODY.length });
    expect(order).toEqual(["sums", "body"]);
    expect(ctx.updates.some((u) => u.phase === "checksum")).toBe(true);
  });

  it("fails a mismatch at /sha256sums naming the sums file and entry, writing nothing", async () => {
    const srv = await startServer({ "/SUMS": text(`${OTHER}  f.bin\n`), "/f.bin": serveBytes(BODY) });
    const dir = await tempDir();
    const err = await rejection(
      downloadFile(testContext(), { url: `${srv.url}/f.bin`, dest: join(dir, "f.bin"), sha256sums: { url: `${srv.url}/SUMS` } }),
    );
    expect(err.toWire()).toMatchObject({
      code: "invalid_request",
      path: "/sha256sums",
      details: { expected: OTHER, actual: SHA, sums: `${srv.url}/SUMS`, name: "f.bin" },
    });
    expect(await listDir(dir)).toEqual([]);
  });

  it("fails a missing entry at /sha256sums/name listing the entries, before downloading the body", async () => {
    const srv = await startServer({ "/SUMS": text(`${OTHER}  a.bin\n${OTHER}  b.bin\n`), "/f.bin": serveBytes(BODY) });
    const dir = await tempDir();
    const err = await rejection(
      downloadFile(testContext(), { url: `${srv.url}/f.bin`, dest: join(dir, "f.bin"), sha256sums: { url: `${srv.url}/SUMS` } }),
    );
    expect(err.toWire()).toMatchObject({
      code: "invalid_request",
      path: "/sha256sums/name",
      details: { name: "f.bin", entries: ["a.bin", "b.bin"] },
    });
    expect(srv.hits["/f.bin"]).toBeUndefined();
    expect(await listDir(dir)).toEqual([]);
  });

  it("looks up sha256sums.name instead of the file name, and a missing sums file is not_found at /sha256sums/url", async () => {
    const srv = await startServer({ "/SUMS": text(`${SHA}  ./dist/renamed.bin\n`), "/f.bin": serveBytes(BODY) });
    const dir = await tempDir();
    const r = await downloadFile(testContext(), {
      url: `${srv.url}/f.bin`,
      dest: join(dir, "f.bin"),
      sha256sums: { url: `${srv.url}/SUMS`, name: "renamed.bin" },
    });
    expect(r.sha256).toBe(SHA);
    const gone = await rejection(
      downloadFile(testContext(), { url: `${srv.url}/f.bin`, dest: join(dir, "g.bin"), sha256sums: { url: `${srv.url}/nope` } }),
    );
    expect(gone.toWire()).toMatchObject({ code: "not_found", path: "/sha256sums/url", details: { status: 404 } });
  });

  it("reads GNU, BSD and bare-hash sums files", () => {
    expect(findSha256(`# comment\n${OTHER}  x\n${SHA}  f.bin\n`, "f.bin", "S")).toBe(SHA);
    expect(findSha256(`SHA256 (f.bin) = ${SHA}\r\n`, "f.bin", "S")).toBe(SHA);
    expect(findSha256(`${SHA}\n`, "anything", "S")).toBe(SHA);
    expect(() => findSha256(`${SHA}  a/f.bin\n${OTHER}  b/f.bin\n`, "f.bin", "S")).toThrow(/2 different entries/);
  });
});

describe("GitHub release downloads checked against a sums asset", () => {
  async function release(sums: string) {
    const routes: Record<string, Route> = {};
    const api = await startServer(routes);
    const asset = (name: string) => ({ name, size: 1, browser_download_url: `${api.url}/dl/${name}` });
    routes["/repos/acme/tool/releases/tags/v1"] = (_q, res) =>
      res.writeHead(200).end(JSON.stringify({ tag_name: "v1", assets: [asset("tool-linux.tgz"), asset("tool_1_checksums.txt")] }));
    routes["/dl/tool-linux.tgz"] = serveBytes(BODY);
    routes["/dl/tool_1_checksums.txt"] = text(sums);
    return api;
  }

  it("takes the hash from the release's checksums asset (a glob) for the asset's own name", async () => {
    const api = await release(`${OTHER}  tool-mac.tgz\n${SHA}  tool-linux.tgz\n`);
    const dir = await tempDir();
    const r = await downloadGithubAsset(
      testContext(),
      { repo: "acme/tool", tag: "v1", asset: "*linux*" },
      { apiBase: api.url },
      { dest: `${dir}/`, sha256sums: { asset: "*checksums.txt" } },
    );
    expect(r).toMatchObject({ asset: "tool-linux.tgz", sha256: SHA });
    expect(api.hits["/repos/acme/tool/releases/tags/v1"]).toBe(1);
  });

  it("fails a mismatch naming the asset, and a sums glob matching no asset at /sha256sums/asset", async () => {
    const api = await release(`${OTHER}  tool-linux.tgz\n`);
    const dir = await tempDir();
    const query = { repo: "acme/tool", tag: "v1", asset: "*linux*" };
    const bad = await rejection(
      downloadGithubAsset(testContext(), query, { apiBase: api.url }, { dest: `${dir}/`, sha256sums: { asset: "*checksums*" } }),
    );
    expect(bad.toWire()).toMatchObject({
      path: "/sha256sums",
      details: { sums: "tool_1_checksums.txt", name: "tool-linux.tgz", expected: OTHER, actual: SHA },
    });
    const none = await rejection(
      downloadGithubAsset(testContext(), query, { apiBase: api.url }, { dest: `${dir}/`, sha256sums: { asset: "SHA256SUMS" } }),
    );
    expect(none.toWire()).toMatchObject({ code: "invalid_request", path: "/sha256sums/asset" });
    expect(api.hits["/dl/tool-linux.tgz"]).toBe(1);
    expect(await listDir(dir)).toEqual([]);
  });
});
