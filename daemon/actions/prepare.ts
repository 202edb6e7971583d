import { prepare } from "../../protocol/actions/prepare.js";
import { ActionError } from "../../protocol/errors.js";
import { checkWorkspace, recipeIdentity } from "../nix/recipe.js";
import { entry } from "./context.js";

export default entry(prepare, async (params, { services }) => {
  const feature = services.prepare;
  if (!feature.available) throw new ActionError("unavailable", `prepare needs Nix with flakes: ${feature.reason}`, { details: { reason: feature.reason } });
  const { preparer, inflight } = feature;
  const workspace = checkWorkspace(params.workspace);
  const req = { workspace, packages: params.packages, flake: params.flake, updateLock: params.updateLock };
  // Hostile names and bad refs are refused here, before any Nix process.
  const plan = preparer.plan(req, workspace, { adopt: !preparer.busy(workspace) });
  if (plan.ready) return { ready: true, environment: plan.environment };
  const identity = recipeIdentity(workspace, plan.recipe);
  const runningId = inflight.get(identity);
  if (runningId && params.key === undefined) {
    const running = services.jobs.get(runningId);
    if (!running.finished) return { ready: false, job: running.status() };
  }
  const job = services.jobs.start({
    kind: "prepare",
    title: `prepare ${workspace}${plan.recipe.kind === "packages" ? ` (${plan.recipe.packages.join(" ")})` : ` (${plan.recipe.ref})`}`,
    key: params.key,
    params: req,
    cwd: workspace,
    run: async (jobCtx) => {
      const { environment, closure, publication } = await preparer.run(req, workspace, jobCtx);
      return { ok: true, result: { environment, closure, ...(publication ? { publication } : {}) } };
    },
  });
  if (!job.finished) inflight.track(identity, job.id, new Promise<void>((resolve) => job.once("end", () => resolve())));
  return { ready: false, job: job.status() };
});
