import { terminalOpen } from "../../protocol/actions/browser.js";
import type { JobStatus } from "../../protocol/common.js";
import { ActionError } from "../../protocol/errors.js";
import { entry } from "./context.js";
import { linkScope } from "./link-scope.js";
import { startProcessJob } from "./process-job.js";

/** Why no terminal can run here (node-pty, a native addon, failed to load), or undefined. */
async function ptyUnavailable(): Promise<string | undefined> {
  try {
    await import("../runners/pty.js");
    return undefined;
  } catch (err) {
    return `terminals are not available here: node-pty could not be loaded (${(err as Error).message})`;
  }
}

export default entry(terminalOpen, async (params, ctx) => {
  const { services } = ctx;
  const scope = linkScope(params.scope, ctx.connection.scope);
  const ptyReason = await ptyUnavailable();
  const webReason = services.links.unavailable();
  // An SSH session types into the terminal: a watch-only hand-off gets the web link alone.
  const sshReason =
    scope === "observe"
      ? "an observe terminal link has no SSH credential (an SSH session types); ask with scope manage for one"
      : services.ssh.status().reason;
  // Either way in is enough: the web link and the SSH command are each best-effort.
  if (ptyReason || (webReason && sshReason)) return { available: false as const, reason: ptyReason ?? `${webReason}; ${sshReason}` };
  // A terminal nobody may be handed a link or a credential for is not started (a link's token issues nothing).
  services.links.checkIssue(scope, ctx.connection.tokenId);
  let job: JobStatus;
  if (params.job !== undefined) {
    const existing = services.jobs.get(params.job);
    if (existing.record.kind !== "terminal")
      throw new ActionError(
        "conflict",
        `job ${existing.id} is a ${existing.record.kind} job, not a terminal; leave out job to start a new terminal`,
        { path: "/job" },
      );
    if (existing.finished)
      throw new ActionError("conflict", `terminal ${existing.id} has ended (${existing.state}); leave out job to start a new one`, {
        path: "/job",
      });
    job = existing.status();
  } else {
    const shell = services.baseEnv.SHELL?.startsWith("/") ? services.baseEnv.SHELL : "bash";
    const argv = params.command === undefined ? [shell, "-l"] : ["bash", "-c", params.command];
    const started = await startProcessJob(
      {
        kind: "terminal",
        title: params.command ?? `terminal (${shell})`,
        argv,
        params: { ...params, ttlMs: undefined },
        cwd: params.cwd,
        pty: { cols: params.cols ?? 80, rows: params.rows ?? 24 },
      },
      ctx,
    );
    job = started.job;
  }
  // Both tokens are issued at once, so one write of tokens.json keeps them.
  const [link, ssh] = await Promise.all([
    webReason ? undefined : services.links.issue("terminal", scope, ctx.connection.tokenId, params.ttlMs, { job: job.id }),
    scope === "observe" ? { available: false as const, reason: sshReason! } : services.ssh.issue(ctx.connection.tokenId, params.ttlMs),
  ]);
  const web = link
    ? { webTerminalUrl: link.url, webTerminalExpiresAt: link.expiresAt, tokenId: link.tokenId }
    : { webTerminalUnavailable: webReason };
  if (!ssh.available) return { available: true as const, ...web, expiresAt: link!.expiresAt, scope, job, sshUnavailable: ssh.reason };
  const { available: _, tokenId: sshTokenId, expiresAt: sshExpiresAt, ...sshFields } = ssh;
  return {
    available: true as const,
    ...web,
    expiresAt: link?.expiresAt ?? sshExpiresAt,
    scope,
    job,
    ...sshFields,
    sshTokenId,
    sshExpiresAt,
  };
});
