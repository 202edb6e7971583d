import { reposAdd } from "../../protocol/actions/repos-add.js";
import { entry } from "./context.js";
import { startWorkspaceJob } from "./workspace-job.js";

export default entry(reposAdd, async (params, ctx) => {
  const ws = ctx.services.workspace;
  const { wait, key, ...req } = params;
  await ws.checkAddRepo(req); // bad id/url or an existing repository: refused now, not by a failed job
  const repo = req.repo ?? "default";
  const from = req.url !== undefined ? ` from ${req.url}` : req.path !== undefined ? ` from ${req.path}` : " (git init)";
  return startWorkspaceJob(
    { kind: "repos.add", title: `repos.add ${repo}${from}`, params: req, key, wait, run: (jobCtx) => ws.addRepo(req, jobCtx) },
    ctx,
  );
});
