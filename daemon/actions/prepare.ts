import { prepare } from "../../protocol/actions/prepare.js";
import { ActionError } from "../../protocol/errors.js";
import { sessionOf } from "../fs/session.js";
import { checkWorkspace, recipeIdentity } from "../nix/recipe.js";
import { entry } from "./context.js";
import { replyForJob, startJob } from "./job-start.js";

export default entry(prepare, async (params, { services, connection, log }) => {
  const feature = services.prepare;
  if (!feature.available)
    throw new ActionError("unavailable", `prepare needs Nix with flakes: ${feature.reason}`, { details: { reason: feature.reason } });
  const { preparer, inflight } = feature;
  const workspace = checkWorkspace(params.workspace);
  const req = { workspace, packages: params.packages, flake: params.flake, updateLock: params.updateLock };
  // Hostile names and bad refs are refused here, before any Nix process.
  const plan = preparer.plan(req, workspace, { adopt: !preparer.busy(workspace) });
  if (plan.ready) return { ready: true, environment: plan.environment };
  // Recorded, but the store lost its paths (a fresh /nix under a kept home): copy them back from the
  // binary cache they were pushed to, in this request (it stops when the client goes); a job builds only when that fails.
  let restoreFailed: string | undefined;
  if (plan.restorable) {
    const out = await preparer.restore(req, workspace, sessionOf(connection).signal);
    if (out.ready) return { ready: true, environment: out.environment, ...(out.restored ? { restored: out.restored } : {}) };
    restoreFailed = out.reason;
    log.info({ workspace, reason: out.reason }, "prepare: restoring from the binary cache failed; preparing again");
  }
  const identity = recipeIdentity(workspace, plan.recipe);
  const reply = { wait: params.wait };
  const runningId = inflight.get(identity);
  if (runningId && params.key === undefined) {
    const running = services.jobs.get(runningId);
    // An identical prepare already running is joined (and waited for, with `wait`).
    if (!running.finished) return { ready: false, ...(await replyForJob(services, running, reply)) };
  }
  const started = await startJob(
    services,
    {
      kind: "prepare",
      title: `prepare ${workspace}${plan.recipe.kind === "packages" ? ` (${plan.recipe.packages.join(" ")})` : ` (${plan.recipe.ref})`}`,
      key: params.key,
      // What idempotency compares: the request and the deadline, not `wait`.
      params: params.timeoutMs === undefined ? req : { ...req, timeoutMs: params.timeoutMs },
      timeoutMs: params.timeoutMs,
      cwd: workspace,
      run: async (jobCtx) => {
        const { environment, closure, publication, restored } = await preparer.run(req, workspace, jobCtx, { restoreFailed });
        void feature.registry.refresh(); // the pin's narHash may be known now
        return {
          ok: true,
          result: { environment, closure, ...(publication ? { publication } : {}), ...(restored ? { restored } : {}) },
        };
      },
    },
    {
      ...reply,
      started: (job) => {
        if (!job.finished) inflight.track(identity, job.id, new Promise<void>((resolve) => job.once("end", () => resolve())));
      },
    },
  );
  return { ready: false, job: started.job };
});
