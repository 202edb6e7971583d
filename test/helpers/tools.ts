import { execFileSync } from "node:child_process";

/**
 * Whether an external tool is usable for a test file. When absent, the test is skipped with a
 * printed reason — unless HOTLINE_REQUIRE_<TOOL>=1 (set by .ci/run), where absence is a failure,
 * so a skip can never hide in CI.
 */
export function toolAvailable(tool: string, versionArgs: string[] = ["--version"]): boolean {
  let ok = false;
  try {
    execFileSync(tool, versionArgs, { stdio: "ignore", timeout: 20_000 });
    ok = true;
  } catch {
    ok = false;
  }
  const required = process.env[`HOTLINE_REQUIRE_${tool.toUpperCase()}`] === "1";
  if (!ok && required) {
    throw new Error(`${tool} is required here (HOTLINE_REQUIRE_${tool.toUpperCase()}=1) but is not usable`);
  }
  if (!ok) console.warn(`[skip] ${tool} is not installed: tests that need it are skipped`);
  return ok;
}
