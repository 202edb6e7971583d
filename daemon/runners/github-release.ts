import { readFile } from "node:fs/promises";
import picomatch from "picomatch";
import type { Dispatcher } from "undici";
import { ActionError } from "../../protocol/errors.js";
import type { RunContext } from "./context.js";
import { downloadFile, type DownloadResult, type SumsFileRef } from "./download.js";
import { openFollowingRedirects, parseHttpUrl } from "./http-open.js";

/**
 * Turns `{repo, tag, asset-glob}` into exactly one release asset through the GitHub releases API
 * (any base URL, so tests and GitHub Enterprise work), then downloads it. The optional token is
 * read from a file the operator configured — never from the environment — and is sent only to
 * the API's own origin.
 */

export interface GithubAssetQuery {
  repo: string;
  /** A release tag, or "latest" for the newest non-prerelease. */
  tag: string;
  /** picomatch glob that must match exactly one asset name. */
  asset: string;
}

export interface GithubApiOptions {
  /** e.g. https://api.github.com (config `githubApi`). */
  apiBase: string;
  /** File holding a token; unset means anonymous. */
  tokenFile?: string;
  dispatcher?: Dispatcher;
}

export interface ResolvedAsset {
  name: string;
  url: string;
  size: number;
  tag: string;
}

const REPO_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/(?!\.\.?$)[A-Za-z0-9._-]{1,100}$/;
const MAX_RELEASE_JSON_BYTES = 16 * 1024 * 1024;

/** Checks `owner/name` against GitHub's grammar before any request is built from it. */
export function validateRepo(repo: string, fieldPath = "/github/repo"): void {
  if (!REPO_PATTERN.test(repo)) {
    throw new ActionError(
      "invalid_request",
      `repo must look like "owner/name" (letters, digits, '-', '.', '_'), got ${JSON.stringify(repo)}`,
      { path: fieldPath },
    );
  }
}

/** Reads the token file (absent means anonymous); the token is trimmed and never logged. */
export async function readGithubToken(tokenFile: string | undefined): Promise<string | undefined> {
  if (!tokenFile) return undefined;
  const text = await readFile(tokenFile, "utf8").catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return "";
    throw new ActionError(
      "unavailable",
      `the GitHub token file ${tokenFile} cannot be read (${err.code ?? err.message}); fix its permissions or remove it`,
    );
  });
  return text.trim() || undefined;
}

/** Asks the releases API for the release and picks the single asset matching the glob. */
export async function resolveGithubAsset(
  ctx: Pick<RunContext, "signal">,
  query: GithubAssetQuery,
  api: GithubApiOptions,
  token?: string,
): Promise<ResolvedAsset> {
  return pickAsset(await fetchRelease(ctx, query, api, token), query);
}

async function fetchRelease(ctx: Pick<RunContext, "signal">, query: GithubAssetQuery, api: GithubApiOptions, token?: string) {
  validateRepo(query.repo);
  if (query.tag.trim() === "" || /[\u0000-\u001f]/.test(query.tag)) {
    throw new ActionError("invalid_request", `tag must be a release tag or "latest", got ${JSON.stringify(query.tag)}`, {
      path: "/github/tag",
    });
  }
  const base = parseHttpUrl(`${api.apiBase.replace(/\/+$/, "")}/`, "/github");
  const suffix = query.tag === "latest" ? "releases/latest" : `releases/tags/${encodeURIComponent(query.tag)}`;
  const endpoint = new URL(`repos/${query.repo}/${suffix}`, base);
  const res = await openFollowingRedirects(endpoint, {
    signal: ctx.signal,
    headers: { accept: "application/vnd.github+json", "x-github-api-version": "2022-11-28" },
    authorization: token ? { origin: base.origin, value: `Bearer ${token}` } : undefined,
    dispatcher: api.dispatcher,
    fieldPath: "/github",
  });
  if (res.statusCode === 404) {
    await res.body.dump().catch(() => undefined);
    const what = query.tag === "latest" ? "no published release" : `no release tagged ${JSON.stringify(query.tag)}`;
    throw new ActionError("not_found", `${query.repo} has ${what} (or the repository is private and no token is configured)`, {
      path: "/github/tag",
    });
  }
  if (res.statusCode !== 200) {
    await res.body.dump().catch(() => undefined);
    const hint = res.statusCode === 401 || res.statusCode === 403 ? " (rate limit or token problem; configure a token file)" : "";
    throw new ActionError("unavailable", `the GitHub API answered HTTP ${res.statusCode} for ${query.repo}${hint}`, {
      path: "/github",
      details: { status: res.statusCode },
    });
  }
  return parseRelease(await readBounded(res.body, MAX_RELEASE_JSON_BYTES));
}

/** Where the expected hash comes from: a sums file by URL, or an asset of the same release. */
export type GithubSums = { url: string; name?: string } | { asset: string; name?: string };

/** Resolves the asset, then downloads it like any URL (sha256, overwrite and dest rules apply). */
export async function downloadGithubAsset(
  ctx: RunContext,
  query: GithubAssetQuery,
  api: GithubApiOptions,
  download: {
    dest: string;
    sha256?: string;
    sha256sums?: GithubSums;
    overwrite?: boolean;
    parents?: boolean;
    maxRetries?: number;
    retryDelayMs?: number;
  },
): Promise<DownloadResult & { asset: string; tag: string }> {
  const token = await readGithubToken(api.tokenFile);
  ctx.progress({ phase: "resolve", message: `${query.repo}@${query.tag}` });
  const release = await fetchRelease(ctx, query, api, token);
  const asset = pickAsset(release, query);
  const sums = download.sha256sums;
  let sha256sums: SumsFileRef | undefined;
  if (sums && "asset" in sums) {
    const file = pickAsset(release, { ...query, asset: sums.asset }, "/sha256sums/asset");
    const headers = { accept: "application/octet-stream" };
    sha256sums = { url: file.url, name: sums.name ?? asset.name, label: file.name, field: "/sha256sums/asset", headers };
  } else if (sums) {
    sha256sums = { url: sums.url, name: sums.name ?? asset.name };
  }
  const origin = new URL(api.apiBase).origin;
  const result = await downloadFile(ctx, {
    ...download,
    sha256sums,
    url: asset.url,
    headers: { accept: "application/octet-stream" },
    authorization: token ? { origin, value: `Bearer ${token}` } : undefined,
    dispatcher: api.dispatcher,
  });
  return { ...result, asset: asset.name, tag: asset.tag };
}

interface ReleaseJson {
  tag_name: string;
  assets: { name: string; browser_download_url: string; size: number }[];
}

function parseRelease(text: string): ReleaseJson {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ActionError("unavailable", "the GitHub API returned something that is not JSON");
  }
  const r = json as Partial<ReleaseJson>;
  if (
    typeof r.tag_name !== "string" ||
    !Array.isArray(r.assets) ||
    !r.assets.every((a) => typeof a?.name === "string" && typeof a?.browser_download_url === "string")
  ) {
    throw new ActionError("unavailable", "the GitHub API's release JSON has no tag_name/assets[].name/browser_download_url");
  }
  return r as ReleaseJson;
}

function pickAsset(release: ReleaseJson, query: GithubAssetQuery, field = "/github/asset"): ResolvedAsset {
  const isMatch = picomatch(query.asset, { dot: true });
  const names = release.assets.map((a) => a.name);
  const matches = release.assets.filter((a) => isMatch(a.name));
  if (matches.length !== 1) {
    const problem =
      matches.length === 0 ? "matches no asset" : `matches ${matches.length} assets (${matches.map((a) => a.name).join(", ")})`;
    throw new ActionError(
      "invalid_request",
      `asset pattern ${JSON.stringify(query.asset)} ${problem} of release ${release.tag_name}; assets: ${names.join(", ") || "(none)"}`,
      {
        path: field,
        details: { assets: names, matched: matches.map((a) => a.name) },
      },
    );
  }
  const asset = matches[0]!;
  return { name: asset.name, url: asset.browser_download_url, size: asset.size, tag: release.tag_name };
}

async function readBounded(body: AsyncIterable<Buffer> & { destroy(): void }, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const chunk of body) {
    n += chunk.length;
    if (n > limit) {
      body.destroy();
      throw new ActionError("unavailable", `the GitHub API's release JSON is larger than ${limit} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}
