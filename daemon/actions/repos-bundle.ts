import { reposBundle } from "../../protocol/actions/repos-bundle.js";
import { entry } from "./context.js";
import { startWorkspaceJob } from "./workspace-job.js";

export default entry(reposBundle, async (params, ctx) => {
  const ws = ctx.services.workspace;
  const { wait, key, ...req } = params;
  const { repo, clonePath } = await ws.checkRepoRef(req);
  return startWorkspaceJob(
    {
      kind: "repos.bundle",
      title: `repos.bundle ${repo}`,
      params: req,
      key,
      wait,
      cwd: clonePath,
      run: (jobCtx) => ws.bundle(req, jobCtx),
    },
    ctx,
  );
});
