import { ActionError } from "../../protocol/errors.js";
import { packageIndexOf, type FailedBuild } from "./build-failures.js";

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
];

/**
 * A download that failed for want of a network (curl: cannot resolve, cannot connect, timed out,
 * TLS or connection reset) — the usual cause offline: nixpkgs (the pin), a flake input or a
 * package that is not in the store and no reachable cache has.
 */
const NO_NETWORK =
  /unable to download '([^']+)': ((?:Couldn't resolve (?:host name|proxy name)|Could not resolve host|Couldn't connect to server|Timeout was reached|Connection timed out|SSL connect error|Failure when receiving data from the peer|Send failure|Recv failure)[^\n]*?\(\d+\))/;

/** The words for prepare's way out when Nix cannot download: a reachable cache, a local nixpkgs, or network. */
function noNetwork(exitCode: number, url: string, reason: string): ActionError {
  return new ActionError(
    "unavailable",
    `Nix cannot download ${url}: ${reason} — this machine has no network to fetch it (the nixpkgs pin, a flake input or a package not yet in the Nix store). ` +
      "Ways out: a reachable binary cache that has it (--cache-substituter / environmentCache.substituters, with its key in --cache-trusted-public-key), " +
      "a local nixpkgs (HOTLINE_NIXPKGS=path:/path/to/nixpkgs or --nixpkgs; a workspace flake can point its own nixpkgs input there), " +
      "or network access to that host; then retry",
    { details: { nixExitCode: exitCode, url } },
  );
}

/** Lines of a failed builder's log quoted in the message itself (all of them are in `details`). */
const MESSAGE_LOG_LINES = 5;

/**
 * Turns Nix's exit code and last error into a typed error: a missing attribute names the package,
 * a failed build names the derivation that failed (the package, when it is one of `packages`) and
 * its builder's last lines instead of the wrapper that depended on it.
 */
export function nixFailure(
  exitCode: number,
  message: string | undefined,
  packages: readonly string[] | undefined,
  failedBuilds: readonly FailedBuild[] = [],
): ActionError {
  const text = message ?? `nix exited with code ${exitCode}`;
  const offline = NO_NETWORK.exec(text);
  if (offline) return noNetwork(exitCode, offline[1]!, offline[2]!);
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
  if (failedBuilds.length > 0) return buildFailure(exitCode, text, packages ?? [], failedBuilds);
  const what = exitCode === 100 ? "a package failed to build" : exitCode === 1 ? "evaluation failed" : `nix exited with code ${exitCode}`;
  return new ActionError("invalid_request", `${what}: ${text}`, { details: { nixExitCode: exitCode } });
}

function buildFailure(exitCode: number, text: string, packages: readonly string[], builds: readonly FailedBuild[]): ActionError {
  const failed = builds.map((b) => {
    const index = packageIndexOf(b.name, packages);
    return { ...b, ...(index >= 0 ? { package: packages[index]!, index } : {}) };
  });
  const first = failed[0]!;
  const who = first.index !== undefined ? `packages[${first.index}] ${JSON.stringify(first.package)}` : `${JSON.stringify(first.name)}`;
  const more =
    failed.length > 1
      ? ` (and ${failed
          .slice(1)
          .map((f) => JSON.stringify(f.package ?? f.name))
          .join(", ")})`
      : "";
  const lines = first.log.slice(-MESSAGE_LOG_LINES);
  const tail = lines.length > 0 ? `; its builder's last lines:\n${lines.join("\n")}` : "; its builder printed nothing";
  return new ActionError(
    "invalid_request",
    `${who}${more} failed to build: the builder of ${first.drv} exited with code ${first.exitCode}${tail}\n(nix: ${text})`,
    {
      ...(first.index !== undefined ? { path: `/packages/${first.index}` } : {}),
      details: {
        nixExitCode: exitCode,
        package: first.package ?? first.name,
        failed: failed.map(({ index: _, ...f }) => f),
      },
    },
  );
}
