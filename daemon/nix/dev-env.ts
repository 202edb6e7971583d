import { PREPEND_VARS, splitList, type PreparedEnvironment } from "./environment.js";

/**
 * One variable of `nix print-dev-env --json`: `exported` and `var` are strings (exported or a
 * shell variable), `array` and `associative` are bash arrays; other types may appear in newer Nix.
 */
export type DevEnvVar =
  | { type: "exported" | "var"; value: string }
  | { type: "array"; value: string[] }
  | { type: "associative"; value: Record<string, string> }
  | { type: "unknown"; value?: unknown };
export interface DevEnvJson {
  bashFunctions?: Record<string, string>;
  variables: Record<string, DevEnvVar>;
}

// Nix's own ignoreVars (what `nix develop` never exports: shell state, the builder's temp dirs and
// sandbox values), plus build-time values and the shell derivation's own bookkeeping: none of them
// describes the environment a job should get.
const DROP = new Set([
  "BASHOPTS",
  "HOME",
  "NIX_BUILD_TOP",
  "NIX_ENFORCE_PURITY",
  "NIX_LOG_FD",
  "NIX_REMOTE",
  "PPID",
  "SHELLOPTS",
  "SSL_CERT_FILE",
  "TEMP",
  "TEMPDIR",
  "TERM",
  "TMP",
  "TMPDIR",
  "TZ",
  "UID",
  "SHELL",
  "OLDPWD",
  "PWD",
  "SHLVL",
  "_",
  "NIX_BUILD_CORES",
  "builder",
  "name",
  "system",
  "stdenv",
  "shellHook",
  "dontAddDisableDepTrack",
  "out",
  "outputs",
  "args",
  "nativeBuildInputs",
  "buildInputs",
  "propagatedBuildInputs",
  "propagatedNativeBuildInputs",
  "phases",
  "PS1",
  "COMP_WORDBREAKS",
]);
const CERT_PLACEHOLDER = "/no-cert-file.crt";

/** Whether a variable must not reach a job (shell internals, build-time leftovers, direnv keys). */
export function isDroppedVariable(name: string, value: string, outputNames: ReadonlySet<string> = new Set()): boolean {
  if (DROP.has(name) && !(name === "SSL_CERT_FILE" && value !== CERT_PLACEHOLDER)) return true;
  if (name === "NIX_SSL_CERT_FILE" && value === CERT_PLACEHOLDER) return true;
  if (name.startsWith("DIRENV_") || name.startsWith("__fish") || name.startsWith("BASH_FUNC_")) return true;
  return outputNames.has(name);
}

/** The exported variables of a dev env, filtered, with search-path variables turned into fragments. */
export function environmentFromDevEnv(json: DevEnvJson): PreparedEnvironment {
  const vars = json.variables;
  const outputs = vars.outputs?.type === "exported" ? new Set(vars.outputs.value.split(/\s+/).filter(Boolean)) : new Set<string>();
  const exported: Record<string, string> = {};
  for (const [name, v] of Object.entries(vars)) if (v.type === "exported") exported[name] = v.value;
  return environmentFromExports(exported, outputs, []);
}

/**
 * Filters a set of exported variables (from JSON or from the post-hook `env -0` dump).
 * `hostLists` are the host's own search-path entries, removed from fragments (the hook shell ran with them).
 */
export function environmentFromExports(
  exported: Record<string, string>,
  outputs: ReadonlySet<string>,
  hostPath: readonly string[],
): PreparedEnvironment {
  const env: PreparedEnvironment = { set: {}, prepend: {} };
  const host = new Set(hostPath);
  for (const [name, value] of Object.entries(exported)) {
    if ((PREPEND_VARS as readonly string[]).includes(name)) {
      const parts = [...new Set(splitList(value).filter((p) => p !== "/path-not-set" && !(name === "PATH" && host.has(p))))];
      if (parts.length > 0) env.prepend[name] = parts;
      continue;
    }
    if (isDroppedVariable(name, value, outputs)) continue;
    env.set[name] = value;
  }
  return env;
}

/** The store path of the `-env` output (the thing to root against garbage collection). */
export function envStorePath(json: DevEnvJson): string | undefined {
  const out = json.variables.out;
  return out && out.type === "exported" && out.value.startsWith("/nix/store/") ? out.value : undefined;
}

/** The dev shell's hook text, or "" when it has none. */
export function shellHookOf(json: DevEnvJson): string {
  const hook = json.variables.shellHook;
  return hook && (hook.type === "exported" || hook.type === "var") ? hook.value : "";
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
// Read-only or per-process bash variables that an rc script must not assign (Nix's toBash skips these too).
const RC_SKIP = new Set(
  [...DROP]
    .filter((n) => /^[A-Z_]+$/.test(n))
    .concat([
      "BASH",
      "BASHPID",
      "EUID",
      "LINENO",
      "SRANDOM",
      "RANDOM",
      "SECONDS",
      "EPOCHREALTIME",
      "EPOCHSECONDS",
      "HOSTTYPE",
      "MACHTYPE",
      "OSTYPE",
      "IFS",
      "PS4",
      "OPTERR",
      "OPTIND",
      "BASH_VERSINFO",
      "GROUPS",
      "FUNCNAME",
      "BASH_SOURCE",
      "BASH_LINENO",
    ]),
);
const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The bash rc form of a dev env, rebuilt from the JSON like Nix's own `toBash` (variables,
 * arrays, functions; PATH joined in front of the caller's), ending with the shell hook.
 */
export function devEnvToRc(json: DevEnvJson): string {
  const lines: string[] = ["unset shellHook", 'hotline_saved_PATH="${PATH:-}"', 'hotline_saved_XDG_DATA_DIRS="${XDG_DATA_DIRS:-}"'];
  for (const [name, v] of Object.entries(json.variables)) {
    if (!IDENT.test(name) || (RC_SKIP.has(name) && name !== "PATH")) continue;
    if (v.type === "exported") lines.push(`${name}=${quote(v.value)}`, `export ${name}`);
    else if (v.type === "var") lines.push(`${name}=${quote(v.value)}`);
    else if (v.type === "array") lines.push(`declare -a ${name}=(${v.value.map(quote).join(" ")})`);
    else if (v.type === "associative") {
      lines.push(
        `declare -A ${name}=(${Object.entries(v.value)
          .map(([k, val]) => `[${quote(k)}]=${quote(val)}`)
          .join(" ")})`,
      );
    }
  }
  for (const [fn, body] of Object.entries(json.bashFunctions ?? {})) {
    if (/^[A-Za-z_][A-Za-z0-9_:.-]*$/.test(fn)) lines.push(`${fn} () \n{ \n${body}\n}`);
  }
  lines.push(
    'PATH="${PATH:-}${hotline_saved_PATH:+:$hotline_saved_PATH}"',
    'XDG_DATA_DIRS="${XDG_DATA_DIRS:-}${hotline_saved_XDG_DATA_DIRS:+:$hotline_saved_XDG_DATA_DIRS}"',
    "unset hotline_saved_PATH hotline_saved_XDG_DATA_DIRS",
    'export NIX_BUILD_TOP="$(mktemp -d -t nix-shell.XXXXXX)"',
    'export TMP="$NIX_BUILD_TOP" TMPDIR="$NIX_BUILD_TOP" TEMP="$NIX_BUILD_TOP" TEMPDIR="$NIX_BUILD_TOP"',
  );
  return `${lines.join("\n")}\n`;
}
