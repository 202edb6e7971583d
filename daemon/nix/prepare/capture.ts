import { ActionError } from "../../../protocol/errors.js";
import type { RunContext } from "../../runners/context.js";
import { environmentFromDevEnv, envStorePath, shellHookOf, type DevEnvJson } from "../dev-env.js";
import { runShellHook } from "../hooks.js";

/** A captured environment: its variables (after the shell hook, when there is one) and its store path. */
export interface Captured {
  storePath: string;
  environment: ReturnType<typeof environmentFromDevEnv>;
  hookRan: boolean;
}

/**
 * Phase "capture the environment": the dev env's variables, or when it has a shellHook, the
 * variables after running it once in the workspace (a failing hook fails the preparation).
 */
export async function captureEnvironment(
  json: DevEnvJson,
  workspace: string,
  ctx: RunContext,
  hookTimeoutMs: number | undefined,
): Promise<Captured> {
  const storePath = envStorePath(json);
  if (!storePath) throw new ActionError("internal", "nix print-dev-env did not report the environment's store path");
  let environment = environmentFromDevEnv(json);
  const hook = shellHookOf(json);
  if (hook.trim() !== "") {
    ctx.progress({ phase: "hooks", message: "running the shell hook" });
    try {
      environment = await runShellHook(json, {
        cwd: workspace,
        signal: ctx.signal,
        timeoutMs: hookTimeoutMs ?? 60_000,
        onOutput: (s, d) => ctx.output(s, d),
      });
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      throw new ActionError("invalid_request", `the dev shell's shellHook failed: ${(err as Error).message}`);
    }
  }
  return { storePath, environment, hookRan: hook.trim() !== "" };
}
