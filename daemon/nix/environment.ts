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

function dedupe(parts: string[]): string[] {
  return [...new Set(parts)];
}

/**
 * The environment a job spawns with: the base (the daemon's own env), then the prepared
 * variables, then the prepared fragments in front of the base's lists (de-duplicated), and last
 * the job's own `env`, which wins over everything.
 */
export function applyEnvironment(
  base: Readonly<Record<string, string | undefined>>,
  prepared: PreparedEnvironment | null,
  jobEnv: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined) out[k] = v;
  if (prepared) {
    Object.assign(out, prepared.set);
    for (const [name, fragment] of Object.entries(prepared.prepend)) {
      const joined = dedupe([...fragment, ...splitList(base[name])]);
      if (joined.length > 0) out[name] = joined.join(":");
    }
  }
  return Object.assign(out, jobEnv);
}
