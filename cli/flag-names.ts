/**
 * The daemon's errors name request fields (`path: "/dest"`, "pass overwrite: true"); a CLI user
 * typed flags. This maps each field the CLI sets to the flag or argument that set it, so an error
 * says `--overwrite`, not `overwrite: true`. Fields no verb sets keep their JSON Pointer.
 */
const FIELD_TO_FLAG: Record<string, string> = {
  "/overwrite": "--overwrite",
  "/updateLock": "--update-lock",
  "/force": "--force",
  "/into": "--into",
  "/timeoutMs": "--timeout",
  "/ttlMs": "--ttl",
  "/scope": "--scope",
  "/cwd": "--cwd",
  "/dest": "--dest",
  "/archive": "ARCHIVE",
  "/sha256": "--sha256",
  "/sha256sums": "--sha256-sums",
  "/sha256sums/url": "--sha256-sums",
  "/sha256sums/asset": "--sha256-sums",
  "/strip": "--strip",
  "/format": "--format",
  "/interpreter": "--interpreter",
  "/path": "--path",
  "/github/repo": "--github",
  "/github/tag": "--tag",
  "/github/asset": "--asset",
  "/url": "URL",
  "/flake": "--flake",
  "/workspace": "--workspace",
  "/packages": "PKG…",
  "/ref": "--ref",
  "/base": "--base",
  "/message": "-m",
  "/repo": "--repo",
  "/task": "TASK",
  "/job": "JOB",
  "/state": "--state",
  "/kind": "--kind",
  "/limit": "--limit",
  "/from": "--from",
  "/command": "CMD",
};

/** `pass overwrite: true` → `pass --overwrite`; `pass into: "<branch>"` → `pass --into <branch>`. */
const FIELD_PHRASE = /\b(overwrite|updateLock|force|into): (?:true\b|"([^"]*)")/g;

function flagOf(pointer: string): string | undefined {
  if (FIELD_TO_FLAG[pointer]) return FIELD_TO_FLAG[pointer];
  const parent = pointer.replace(/\/\d+$/, ""); // /packages/2 → /packages
  return parent !== pointer ? FIELD_TO_FLAG[parent] : undefined;
}

/** An error of the daemon, worded for the command line: "conflict: … pass --overwrite (at --dest)". */
export function cliErrorText(error: { code?: string; message: string; path?: string }): string {
  const message = error.message.replace(FIELD_PHRASE, (_all, field: string, value?: string) => {
    const flag = FIELD_TO_FLAG[`/${field}`]!;
    return value !== undefined ? `${flag} ${value}` : flag;
  });
  const where = error.path !== undefined ? ` (at ${flagOf(error.path) ?? error.path})` : "";
  return `${error.code ? `${error.code}: ` : ""}${message}${where}`;
}
