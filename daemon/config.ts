import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { ActionError } from "../protocol/errors.js";

/** Everything the daemon can be told, after flags, environment, user and system config are merged. */
export interface Config {
  host: string;
  port: number;
  stateDir: string;
  configDir: string;
  cacheDir: string;
  systemConfigDir: string;
  allowedOrigins: readonly string[];
  maxPayloadBytes: number;
  outputCapBytes: number;
  /** Output kept across all retained jobs; 0 = a quarter of the state volume, at most 16 GiB. */
  outputBudgetBytes: number;
  retainJobs: number;
  heartbeatMs: number;
  nixpkgs: string;
  githubApi: string;
  workspaceRoot: string;
  idleExitMinutes: number;
  logLevel: string;
}

/** Config-file keys; the same names are the camelCase of the flags. */
const FILE_KEYS = [
  "host",
  "port",
  "allowedOrigins",
  "maxPayloadBytes",
  "outputCapBytes",
  "outputBudgetBytes",
  "retainJobs",
  "heartbeatMs",
  "nixpkgs",
  "githubApi",
  "workspaceRoot",
  "idleExitMinutes",
  "logLevel",
] as const;

/** Flag name ↔ config key ↔ HOTLINE_ environment variable, in one table so they cannot drift. */
export const SETTINGS: ReadonlyArray<{ flag: string; key: keyof Config; env: string; kind: "string" | "number" | "list" }> = [
  { flag: "host", key: "host", env: "HOTLINE_HOST", kind: "string" },
  { flag: "port", key: "port", env: "HOTLINE_PORT", kind: "number" },
  { flag: "state-dir", key: "stateDir", env: "HOTLINE_STATE_DIR", kind: "string" },
  { flag: "config-dir", key: "configDir", env: "HOTLINE_CONFIG_DIR", kind: "string" },
  { flag: "cache-dir", key: "cacheDir", env: "HOTLINE_CACHE_DIR", kind: "string" },
  { flag: "system-config-dir", key: "systemConfigDir", env: "HOTLINE_SYSTEM_CONFIG_DIR", kind: "string" },
  { flag: "allow-origin", key: "allowedOrigins", env: "HOTLINE_ALLOWED_ORIGINS", kind: "list" },
  { flag: "max-payload", key: "maxPayloadBytes", env: "HOTLINE_MAX_PAYLOAD", kind: "number" },
  { flag: "output-cap", key: "outputCapBytes", env: "HOTLINE_OUTPUT_CAP", kind: "number" },
  { flag: "output-budget", key: "outputBudgetBytes", env: "HOTLINE_OUTPUT_BUDGET", kind: "number" },
  { flag: "retain-jobs", key: "retainJobs", env: "HOTLINE_RETAIN_JOBS", kind: "number" },
  { flag: "heartbeat-ms", key: "heartbeatMs", env: "HOTLINE_HEARTBEAT_MS", kind: "number" },
  { flag: "nixpkgs", key: "nixpkgs", env: "HOTLINE_NIXPKGS", kind: "string" },
  { flag: "github-api", key: "githubApi", env: "HOTLINE_GITHUB_API", kind: "string" },
  { flag: "workspace-root", key: "workspaceRoot", env: "HOTLINE_WORKSPACE_ROOT", kind: "string" },
  { flag: "idle-exit", key: "idleExitMinutes", env: "HOTLINE_IDLE_EXIT", kind: "number" },
  { flag: "log-level", key: "logLevel", env: "HOTLINE_LOG_LEVEL", kind: "string" },
];

/** The nixpkgs revision prepare pins new package definitions to, unless configured otherwise. */
export const DEFAULT_NIXPKGS = "github:NixOS/nixpkgs/50ab793786d9de88ee30ec4e4c24fb4236fc2674";

function xdg(envName: string, fallback: string, env: NodeJS.ProcessEnv): string {
  const value = env[envName];
  return value && value.startsWith("/") ? join(value, "hotline") : join(homedir(), fallback, "hotline");
}

function defaults(env: NodeJS.ProcessEnv): Config {
  return {
    host: "127.0.0.1",
    port: 7070,
    stateDir: xdg("XDG_STATE_HOME", ".local/state", env),
    configDir: xdg("XDG_CONFIG_HOME", ".config", env),
    cacheDir: xdg("XDG_CACHE_HOME", ".cache", env),
    systemConfigDir: "/etc/hotline",
    allowedOrigins: [],
    maxPayloadBytes: 1024 * 1024,
    outputCapBytes: 64 * 1024 * 1024,
    outputBudgetBytes: 0,
    retainJobs: 500,
    heartbeatMs: 30_000,
    nixpkgs: DEFAULT_NIXPKGS,
    githubApi: "https://api.github.com",
    workspaceRoot: "/workspace",
    idleExitMinutes: 0,
    logLevel: "info",
  };
}

function coerce(kind: "string" | "number" | "list", raw: string, source: string): string | number | string[] {
  if (kind === "number") {
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0) throw new ActionError("invalid_request", `${source}: expected a non-negative number, got ${JSON.stringify(raw)}`);
    return n;
  }
  if (kind === "list") return raw.split(",").map((s) => s.trim()).filter(Boolean);
  return raw;
}

function readConfigFile(path: string): Partial<Config> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return {};
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ActionError("invalid_request", `${path} is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new ActionError("invalid_request", `${path} must hold a JSON object`);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(parsed)) {
    if (!(FILE_KEYS as readonly string[]).includes(k)) throw new ActionError("invalid_request", `${path}: unknown key ${JSON.stringify(k)}; known keys: ${FILE_KEYS.join(", ")}`);
    out[k] = v;
  }
  return out as Partial<Config>;
}

/**
 * Builds the one frozen config: flags > HOTLINE_* environment > <config>/config.json >
 * <systemConfigDir>/config.json > defaults. `flags` are `--name value` pairs already split from argv.
 */
export function loadConfig(flags: Record<string, string | string[] | undefined>, env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const fromEnvAndFlags: Record<string, unknown> = {};
  for (const s of SETTINGS) {
    const envValue = env[s.env];
    if (envValue !== undefined && envValue !== "") fromEnvAndFlags[s.key] = coerce(s.kind, envValue, s.env);
    const flagValue = flags[s.flag];
    if (flagValue !== undefined) {
      const raw = Array.isArray(flagValue) ? flagValue.join(",") : flagValue;
      fromEnvAndFlags[s.key] = coerce(s.kind, raw, `--${s.flag}`);
    }
  }
  const base = defaults(env);
  const systemDir = (fromEnvAndFlags.systemConfigDir as string | undefined) ?? base.systemConfigDir;
  const configDir = (fromEnvAndFlags.configDir as string | undefined) ?? base.configDir;
  const merged = {
    ...base,
    ...readConfigFile(join(systemDir, "config.json")),
    ...readConfigFile(join(configDir, "config.json")),
    ...fromEnvAndFlags,
  } as Config;
  for (const key of ["stateDir", "configDir", "cacheDir", "systemConfigDir", "workspaceRoot"] as const) merged[key] = resolve(merged[key]);
  if (!Number.isInteger(merged.port) || merged.port > 65535) throw new ActionError("invalid_request", `port must be 0..65535, got ${merged.port}`);
  return Object.freeze({ ...merged, allowedOrigins: Object.freeze([...merged.allowedOrigins]) });
}

/** Environment variable names that belong to the daemon and never reach a job. */
export function isDaemonVariable(name: string): boolean {
  return name.startsWith("HOTLINE_");
}
