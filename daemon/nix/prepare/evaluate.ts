import { ActionError } from "../../../protocol/errors.js";
import type { RunContext } from "../../runners/context.js";
import { runNix, stripAnsi, type NixLogEvent } from "../../runners/nix-cli.js";
import { substituterArgs } from "../binary-cache.js";
import type { DevEnvJson } from "../dev-env.js";
import { BuildFailures } from "../build-failures.js";
import { nixFailure } from "../nix-failure.js";
import { NixProgressTracker } from "../progress.js";
import type { NixSettings } from "./types.js";

/** What an evaluation produced: the dev env, the workspace files Nix read, and the build/substitution counts. */
export type Evaluation = Awaited<ReturnType<typeof evaluate>>;

/**
 * Phase "evaluate and build": runs `nix print-dev-env` (`args`, the shared cache's substituters
 * added), streaming Nix's log to the job and its activities to progress; a failure is nixFailure's
 * error for it (`packages` names what was asked, for its message).
 */
export async function evaluate(
  settings: NixSettings,
  args: string[],
  workspace: string,
  ctx: RunContext,
  packages: readonly string[] | undefined,
) {
  const tracker = new NixProgressTracker((u) => ctx.progress(u));
  const failures = new BuildFailures();
  const evaluated: string[] = [];
  ctx.progress({ phase: "evaluating", message: "evaluating the flake" });
  const onEvent = (e: NixLogEvent) => {
    tracker.feed(e);
    failures.feed(e);
    if (e.action === "msg") {
      const file = e.level === 4 ? /^evaluating file '(.+)'$/.exec(e.msg)?.[1] : undefined;
      if (file) evaluated.push(file);
      else if (e.level <= 3) ctx.output("stderr", `${stripAnsi(e.msg)}\n`);
    } else if (e.action === "start" && e.level <= 3 && e.text) {
      ctx.output("stderr", `${stripAnsi(e.text)}...\n`);
    } else if (e.action === "result" && e.type === 101 && e.fields?.[0] !== undefined) {
      ctx.output("stderr", `${String(e.fields[0])}\n`);
    }
  };
  const res = await runNix(ctx, {
    args: [args[0]!, ...substituterArgs(settings.binaryCache), ...args.slice(1)],
    cwd: workspace,
    env: settings.nixEnv,
    onEvent,
    onPlainLine: (l) => ctx.output("stderr", `${l}\n`),
  }).catch((err: unknown) => {
    if (ctx.signal.aborted) throw err;
    throw new ActionError("unavailable", `nix could not be started: ${(err as Error).message}`, { cause: err });
  });
  tracker.flush();
  if (res.exitCode !== 0) throw nixFailure(res.exitCode, res.errorMessage, packages, failures.list());
  let json: DevEnvJson;
  try {
    json = JSON.parse(res.stdout) as DevEnvJson;
  } catch {
    throw new ActionError("internal", "nix print-dev-env printed something that is not JSON");
  }
  return { json, evaluated, progress: tracker.snapshot() };
}
