import { fileURLToPath } from "node:url";
import type { CodeLanguage } from "../../protocol/actions/code.js";

/** The driver scripts the daemon ships (the build copies daemon/code/drivers beside this module in dist/). */
export const DRIVER_DIR = fileURLToPath(new URL("./drivers/", import.meta.url));

/** The driver protocol this daemon speaks (daemon/code/drivers/PROTOCOL.md). */
export const DRIVER_PROTOCOL = 1;

/** The command line of a context's driver under `interpreter` (python3 or node). */
export function driverArgv(language: CodeLanguage, interpreter: string): string[] {
  return language === "python" ? [interpreter, "-u", `${DRIVER_DIR}python_driver.py`] : [interpreter, `${DRIVER_DIR}js_driver.mjs`];
}

/**
 * The driver's environment: the job environment of its cwd, without an MPLBACKEND inherited from
 * the daemon (the Python driver picks its own backend to capture figures; an MPLBACKEND the
 * context's own `env` sets still wins).
 */
export function driverEnvironment(composed: Record<string, string>, own: Record<string, string> | undefined): Record<string, string> {
  const env = { ...composed };
  if (own?.MPLBACKEND === undefined) delete env.MPLBACKEND;
  return env;
}
