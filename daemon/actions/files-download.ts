import { dirname, join } from "node:path";
import { filesDownload } from "../../protocol/actions/files-download.js";
import type { ParamsOf } from "../../protocol/define.js";
import { ActionError } from "../../protocol/errors.js";
import { downloadFile } from "../runners/download.js";
import { downloadGithubAsset, validateRepo, type GithubSums } from "../runners/github-release.js";
import { parseHttpUrl, logSafeUrl } from "../runners/http-open.js";
import { entry } from "./context.js";
import { startFileJob } from "./files-job.js";

/** The GitHub token, if any, lives in this file of the config directory (never in the environment). */
export const GITHUB_TOKEN_FILE = "github-token";

export default entry(filesDownload, async (params, ctx) => {
  const { services } = ctx;
  if ((params.url === undefined) === (params.github === undefined)) {
    throw new ActionError("invalid_request", 'give exactly one of "url" or "github": {repo, tag, asset}', {
      path: params.url === undefined ? "/url" : "/github",
    });
  }
  // Refused here, before a job exists, so the reply itself names the bad field.
  const url = params.url !== undefined ? parseHttpUrl(params.url) : undefined;
  if (params.github) validateRepo(params.github.repo);
  const gh = params.github;
  const sums = checkSums(params);
  const title = url ? `download ${logSafeUrl(url)}` : `download ${gh!.repo}@${gh!.tag} ${gh!.asset}`;
  const download = { dest: params.dest, sha256: params.sha256, overwrite: params.overwrite, parents: params.parents };
  const urlSums = sums && "url" in sums ? sums : undefined;
  return startFileJob(
    {
      kind: "files.download",
      title,
      params: { ...params, wait: undefined },
      key: params.key,
      timeoutMs: params.timeoutMs,
      wait: params.wait,
      cwd: params.dest.endsWith("/") ? params.dest : dirname(params.dest),
      work: async (jobCtx) => {
        if (gh) {
          const api = { apiBase: services.config.githubApi, tokenFile: join(services.config.configDir, GITHUB_TOKEN_FILE) };
          return { ...(await downloadGithubAsset(jobCtx, gh, api, { ...download, sha256sums: sums })) };
        }
        return { ...(await downloadFile(jobCtx, { ...download, sha256sums: urlSums, url: params.url! })) };
      },
      summary: (r) => {
        const verified = r.verified as { against: string; entry?: string } | undefined;
        const check = verified ? `, verified against ${verified.entry ? `${verified.against} (${verified.entry})` : verified.against}` : "";
        return `downloaded ${String(r.url)} to ${String(r.path)} (${String(r.size)} bytes, sha256 ${String(r.sha256)}${check})`;
      },
    },
    ctx,
  );
});

/** `sha256sums` is exactly one of `url` / `asset` (an asset only with `github`), and never with `sha256`. */
function checkSums(params: ParamsOf<typeof filesDownload>): GithubSums | undefined {
  const sums = params.sha256sums;
  if (!sums) return undefined;
  if (params.sha256 !== undefined) {
    throw new ActionError("invalid_request", 'give "sha256" or "sha256sums", not both', { path: "/sha256sums" });
  }
  if ((sums.url === undefined) === (sums.asset === undefined)) {
    throw new ActionError("invalid_request", 'sha256sums needs exactly one of "url" or "asset"', { path: "/sha256sums" });
  }
  if (sums.asset !== undefined) {
    if (!params.github) {
      throw new ActionError(
        "invalid_request",
        'sha256sums.asset names a release asset; it needs "github" (for a URL download give sha256sums.url)',
        {
          path: "/sha256sums/asset",
        },
      );
    }
    return { asset: sums.asset, name: sums.name };
  }
  parseHttpUrl(sums.url!, "/sha256sums/url");
  return { url: sums.url!, name: sums.name };
}
