import { ActionError } from "../../protocol/errors.js";

/**
 * Failures of Nix itself or of the machine (store, daemon socket, disk, settings), not of what the
 * request asked for: the same request may succeed once the machine is fixed, so they are `unavailable`.
 */
const INFRASTRUCTURE = [
  /experimental Nix feature '[^']+' is disabled/,
  /cannot connect to socket/,
  /cannot open connection to remote store/,
  /No space left on device/,
  /database is locked|SQLite database .* is busy/,
  /(opening lock file|creating directory|getting status of|cannot create) '\/nix\/(store|var)[^']*'.*Permission denied/,
  /Nix daemon disconnected unexpectedly/,
  /unable to download .*: Couldn't resolve host/,
];

/** Turns Nix's exit code and last error into a typed error (a missing attribute names the package). */
export function nixFailure(exitCode: number, message: string | undefined, packages: readonly string[] | undefined): ActionError {
  const text = message ?? `nix exited with code ${exitCode}`;
  if (INFRASTRUCTURE.some((re) => re.test(text))) {
    return new ActionError(
      "unavailable",
      `Nix could not do its work on this machine: ${text}; fix the Nix installation (store, daemon, disk) and retry`,
      { details: { nixExitCode: exitCode } },
    );
  }
  const missing = /attribute '([^']+)' missing/.exec(text)?.[1];
  const index = missing && packages ? packages.findIndex((p) => p.split(".").includes(missing)) : -1;
  if (index >= 0) {
    return new ActionError("invalid_request", `packages[${index}] ${JSON.stringify(packages![index])} is not in this nixpkgs (${text})`, {
      path: `/packages/${index}`,
      details: { nixExitCode: exitCode },
    });
  }
  const what = exitCode === 100 ? "a package failed to build" : exitCode === 1 ? "evaluation failed" : `nix exited with code ${exitCode}`;
  return new ActionError("invalid_request", `${what}: ${text}`, { details: { nixExitCode: exitCode } });
}
