import { createHash, randomBytes } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ActionError } from "../../protocol/errors.js";
import { downloadGithubAsset, validateRepo } from "../../daemon/runners/github-release.js";
import { listDir, serveBytes, startServer, tempDir, testContext, type Route } from "./helpers.js";

const LINUX = randomBytes(200_000);
const DARWIN = randomBytes(1000);

/** The releases API's real JSON shape (trimmed of fields nobody reads, but keeping their kinds). */
function releaseJson(base: string, tag: string, assetNames: string[]) {
  return {
    url: `${base}/repos/acme/tool/releases/1`,
    html_url: `${base}/acme/tool/releases/tag/${tag}`,
    id: 1,
    node_id: "RE_kwDOA",
    tag_name: tag,
    target_commitish: "main",
    name: tag,
    draft: false,
    prerelease: false,
    created_at: "2025-01-01T00:00:00Z",
    published_at: "2025-01-01T00:00:00Z",
    author: { login: "acme", id: 1, type: "User" },
    assets: assetNames.map((name, i) => ({
      url: `${base}/repos/acme/tool/releases/assets/${i + 10}`,
      id: i + 10,
      node_id: `RA_${i}`,
      name,
      label: null,
      uploader: { login: "acme", id: 1 },
      content_type: "application/octet-stream",
      state: "uploaded",
      size: name.includes("linux") ? LINUX.length : DARWIN.length,
      download_count: 3,
      created_at: "2025-01-01T00:00:00Z",
      updated_at: "2025-01-01T00:00:00Z",
      browser_download_url: `${base}/acme/tool/releases/download/${tag}/${name}`,
    })),
    tarball_url: `${base}/repos/acme/tool/tarball/${tag}`,
    zipball_url: `${base}/repos/acme/tool/zipball/${tag}`,
    body: "notes",
  };
}

async function githubServer(assetNames: string[]) {
  const seen: Record<string, string | undefined> = {};
  const routes: Record<string, Route> = {};
  const srv = await startServer(routes);
  const json =
    (tag: string): Route =>
    (req, res) => {
      seen[req.url!] = req.headers.authorization;
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(releaseJson(srv.url, tag, assetNames)));
    };
  routes["/repos/acme/tool/releases/tags/v1.2.3"] = json("v1.2.3");
  routes["/repos/acme/tool/releases/latest"] = json("v2.0.0");
  for (const tag of ["v1.2.3", "v2.0.0"]) {
    routes[`/acme/tool/releases/download/${tag}/tool-linux-amd64.tar.gz`] = (req, res) => {
      seen[req.url!] = req.headers.authorization;
      serveBytes(LINUX)(req, res);
    };
    routes[`/acme/tool/releases/download/${tag}/tool-darwin-arm64.tar.gz`] = serveBytes(DARWIN);
  }
  return { ...srv, seen };
}

const ASSETS = ["tool-linux-amd64.tar.gz", "tool-darwin-arm64.tar.gz", "checksums.txt"];

describe("GitHub release assets", () => {
  it("downloads the one asset matching the glob from a tagged release", async () => {
    const gh = await githubServer(ASSETS);
    const dir = await tempDir();
    const r = await downloadGithubAsset(
      testContext(),
      { repo: "acme/tool", tag: "v1.2.3", asset: "*linux*" },
      { apiBase: gh.url },
      { dest: dir },
    );
    expect(r).toMatchObject({
      asset: "tool-linux-amd64.tar.gz",
      tag: "v1.2.3",
      path: join(dir, "tool-linux-amd64.tar.gz"),
      size: LINUX.length,
    });
    expect(r.sha256).toBe(createHash("sha256").update(LINUX).digest("hex"));
    expect((await readFile(r.path)).equals(LINUX)).toBe(true);
  });

  it("resolves 'latest' through /releases/latest and sends the token from the file to the API only", async () => {
    const gh = await githubServer(ASSETS);
    const dir = await tempDir();
    const tokenFile = join(dir, "token");
    await writeFile(tokenFile, "ghp_secret\n");
    const r = await downloadGithubAsset(
      testContext(),
      { repo: "acme/tool", tag: "latest", asset: "tool-linux-*" },
      { apiBase: `${gh.url}/`, tokenFile },
      { dest: join(dir, "t.tgz") },
    );
    expect(r.tag).toBe("v2.0.0");
    expect(gh.seen["/repos/acme/tool/releases/latest"]).toBe("Bearer ghp_secret");
    expect(gh.hits["/acme/tool/releases/download/v2.0.0/tool-linux-amd64.tar.gz"]).toBe(1);
  });

  it("never sends the token to another origin the asset redirects to", async () => {
    const other: { auth?: string | undefined } = {};
    const cdn = await startServer({
      "/blob": (req, res) => {
        other.auth = req.headers.authorization ?? "none";
        serveBytes(LINUX)(req, res);
      },
    });
    const routes: Record<string, Route> = {};
    const api = await startServer(routes);
    routes["/repos/acme/tool/releases/tags/v1"] = (_q, res) =>
      res
        .writeHead(200)
        .end(JSON.stringify({ tag_name: "v1", assets: [{ name: "a.bin", size: 1, browser_download_url: `${api.url}/dl/a.bin` }] }));
    routes["/dl/a.bin"] = (_q, res) => res.writeHead(302, { location: `${cdn.url}/blob` }).end();
    const dir = await tempDir();
    const tokenFile = join(dir, "token");
    await writeFile(tokenFile, "ghp_secret");
    await downloadGithubAsset(
      testContext(),
      { repo: "acme/tool", tag: "v1", asset: "a.bin" },
      { apiBase: api.url, tokenFile },
      { dest: join(dir, "a.bin") },
    );
    expect(other.auth).toBe("none");
  });

  it("refuses a glob that matches no asset, listing the asset names", async () => {
    const gh = await githubServer(ASSETS);
    const dir = await tempDir();
    const err = await downloadGithubAsset(
      testContext(),
      { repo: "acme/tool", tag: "v1.2.3", asset: "*windows*" },
      { apiBase: gh.url },
      { dest: dir },
    ).catch((e: ActionError) => e);
    expect(err).toBeInstanceOf(ActionError);
    expect((err as ActionError).code).toBe("invalid_request");
    expect((err as ActionError).path).toBe("/github/asset");
    expect((err as ActionError).message).toContain("matches no asset");
    for (const name of ASSETS) expect((err as ActionError).message).toContain(name);
    expect(await listDir(dir)).toEqual([]);
  });

  it("refuses a glob that matches several assets, naming them", async () => {
    const gh = await githubServer(ASSETS);
    const dir = await tempDir();
    const err = (await downloadGithubAsset(
      testContext(),
      { repo: "acme/tool", tag: "latest", asset: "*.tar.gz" },
      { apiBase: gh.url },
      { dest: dir },
    ).catch((e: unknown) => e)) as ActionError;
    expect(err.code).toBe("invalid_request");
    expect(err.message).toContain("matches 2 assets (tool-linux-amd64.tar.gz, tool-darwin-arm64.tar.gz)");
    expect(err.details).toMatchObject({ assets: ASSETS });
    expect(await listDir(dir)).toEqual([]);
  });

  it("reports an unknown tag as not_found", async () => {
    const gh = await githubServer(ASSETS);
    const dir = await tempDir();
    const err = (await downloadGithubAsset(
      testContext(),
      { repo: "acme/tool", tag: "v9", asset: "*" },
      { apiBase: gh.url },
      { dest: dir },
    ).catch((e: unknown) => e)) as ActionError;
    expect(err.code).toBe("not_found");
    expect(err.message).toContain('"v9"');
  });

  it("validates the repo grammar before any request", () => {
    for (const bad of ["acme", "acme/tool/x", "../x", "acme/..", "-acme/tool", "acme/to ol", "acme/tool?x"]) {
      expect(() => validateRepo(bad), bad).toThrow(ActionError);
    }
    for (const good of ["acme/tool", "a-b/c.d_e", "NixOS/nixpkgs"]) expect(() => validateRepo(good)).not.toThrow();
  });
});
