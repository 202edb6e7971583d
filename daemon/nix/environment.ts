/**
 * What a prepared workspace gives a job: variables to set, and list-valued variables (PATH,
 * XDG_DATA_DIRS, XDG_CONFIG_DIRS) as fragments prepended to the job's own value at spawn time.
 */
export interface PreparedEnvironment {
  set: Record<string, string>;
  prepend: Record<string, string[]>;
}

/** Variables Nix gives as search paths; stored as the Nix prefix, never as an absolute value. */
export const PREPEND_VARS = ["PATH", "XDG_DATA_DIRS", "XDG_CONFIG_DIRS"] as const;

/** Splits a colon list, dropping empty entries (an empty entry in PATH means "."). */
export function splitList(value: string | undefined): string[] {
  return value ? value.split(":").filter((p) => p.length > 0) : [];
}
