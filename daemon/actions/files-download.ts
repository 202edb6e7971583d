import { dirname, join } from "node:path";
import { filesDownload } from "../../protocol/actions/files-download.js";
import { ActionError } from "../../protocol/errors.js";
import { downloadFile } from "../runners/download.js";
import { downloadGithubAsset, validateRepo } from "../runners/github-release.js";
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
  const title = url ? `download ${logSafeUrl(url)}` : `download ${gh!.repo}@${gh!.tag} ${gh!.asset}`;
  const download = { dest: params.dest, sha256: params.sha256, overwrite: params.overwrite, parents: params.parents };
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
          return { ...(await downloadGithubAsset(jobCtx, gh, api, download)) };
        }
        return { ...(await downloadFile(jobCtx, { ...download, url: params.url! })) };
      },
      summary: (r) => `downloaded ${String(r.url)} to ${String(r.path)} (${String(r.size)} bytes, sha256 ${String(r.sha256)})`,
    },
    ctx,
  );
});
