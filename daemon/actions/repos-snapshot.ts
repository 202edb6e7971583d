import { reposSnapshot } from "../../protocol/actions/repos-snapshot.js";
import { entry } from "./context.js";
import { startWorkspaceJob } from "./workspace-job.js";

export default entry(reposSnapshot, async (params, ctx) => {
  const ws = ctx.services.workspace;
  const { wait, key, ...req } = params;
  const { repo, clonePath } = await ws.checkRepoRef(req); // unknown repository or ref: refused now
  const title = `repos.snapshot ${repo}@${req.ref ?? "HEAD"}`;
  return startWorkspaceJob(
    { kind: "repos.snapshot", title, params: req, key, wait, cwd: clonePath, run: (jobCtx) => ws.snapshot(req, jobCtx) },
    ctx,
  );
});
