import { mkdir } from "node:fs/promises";
import { ActionError } from "../../protocol/errors.js";

/** `mkdir -p dir` for the `parents: true` of files.download and files.extract; `field` is the JSON Pointer named on failure. */
export async function makeParents(dir: string, field: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o755 });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EEXIST" || code === "ENOTDIR") {
      throw new ActionError("conflict", `cannot create directory ${dir}: a file is in the way; remove it or choose another destination`, {
        path: field,
      });
    }
    throw new ActionError(
      "invalid_request",
      `cannot create directory ${dir} (${code ?? (err as Error).message}); choose a destination you may write`,
      { path: field },
    );
  }
}
