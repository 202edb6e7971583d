import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { ActionError } from "../protocol/errors.js";
import { nearest } from "./dispatch/suggest.js";
import { checkEnvironmentCache, checkPublicUrl, checkSsh, type EnvironmentCacheConfig } from "./config/checks.js";
import { checkValue, coerce } from "./config/values.js";

export type { EnvironmentCacheConfig } from "./config/checks.js";

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
  maxConnections: number;
  nixpkgs: string;
  githubApi: string;
  workspaceRoot: string;
  idleExitMinutes: number;
  logLevel: string;
  environmentCache: EnvironmentCacheConfig;
  /** The address browsers reach the daemon at (a proxy or port forward); links point there. None: the daemon's own address. */
  publicUrl?: string;
  /** Host names the pages and browser-link upgrades answer for (DNS rebinding); the publicUrl host and the bound host are always added. */
  allowedHosts: readonly string[];
  /** The SSH server: "on" (default) or "off". */
  ssh: "on" | "off";
  /** Where the SSH server listens; none: the same address as `host`. */
  sshHost?: string;
  /** 2222 unless set; 0 picks a free port (state.info and the log say which). */
  sshPort: number;
  /** "host:port" SSH clients reach the daemon at (a provider forwarding the port); sshCommand names it. */
  publicSsh?: string;
  /** SSH connections open at once, at most. */
  sshMaxConnections: number;
  /** Channels (sessions, forwards) one SSH connection may hold open at once. */
  sshMaxChannels: number;
  /** "on": ssh -L/-D may reach any address; "off" (default): loopback only. */
  sshForwardAny: "on" | "off";
  /** An SSH connection that has not authenticated within this is closed. */
  sshLoginGraceMs: number;
  /** Preview links' address with `{port}` in the host name (`https://{port}-sandbox.example`); none: `http://<port>.localhost:<daemon port>`. */
  previewUrl?: string;
  /** The X display of the desktop actions (`:1`); DISPLAY by default, none when that is unset. */
  display?: string;
  /** The VNC server behind desktop.open, host:port; 127.0.0.1 and 5900 + the display number by default. */
  vnc?: string;
  /** A token file the daemon only reads and watches (a mounted Secret's); none: `<config>/token`, made on first start. */
  tokenFile?: string;
  /** "on" (default): jobs' CPU and memory and the sandbox's samples (state.metrics, /metrics); "off": neither. */
  metrics: "on" | "off";
  /** Between two samples of the sandbox (state.metrics). */
  metricsIntervalMs: number;
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
  "maxConnections",
  "nixpkgs",
  "githubApi",
  "workspaceRoot",
  "idleExitMinutes",
  "logLevel",
  "environmentCache",
  "publicUrl",
  "allowedHosts",
  "ssh",
  "sshHost",
  "sshPort",
  "publicSsh",
  "sshMaxConnections",
  "sshMaxChannels",
  "sshForwardAny",
  "sshLoginGraceMs",
  "previewUrl",
  "display",
  "vnc",
  "tokenFile",
  "metrics",
  "metricsIntervalMs",
] as const;

const CACHE_FILE_KEYS = ["push", "secretKeyFile", "substituters", "trustedPublicKeys"] as const;
type CacheKey = `environmentCache.${(typeof CACHE_FILE_KEYS)[number]}`;

/**
 * One setting: its flag, config key and HOTLINE_ variable, and what a value must be. Every source
 * (flag, environment, config file) is checked against the row: `number` values are whole numbers
 * from `min` (default 0) to `max` unless `fraction`; `choices` limits a string; `list` is a comma
 * list in flags and the environment, an array of strings in a file.
 */
export interface Setting {
  flag: string;
  key: keyof Config | CacheKey;
  env: string;
  kind: "string" | "number" | "list";
  min?: number;
  max?: number;
  fraction?: true;
  choices?: readonly string[];
}

const GIB = 1024 * 1024 * 1024;

/** Flag name ↔ config key ↔ HOTLINE_ environment variable, in one table so they cannot drift. */
export const SETTINGS: ReadonlyArray<Setting> = [
  { flag: "host", key: "host", env: "HOTLINE_HOST", kind: "string" },
  { flag: "port", key: "port", env: "HOTLINE_PORT", kind: "number", max: 65535 },
  { flag: "state-dir", key: "stateDir", env: "HOTLINE_STATE_DIR", kind: "string" },
  { flag: "config-dir", key: "configDir", env: "HOTLINE_CONFIG_DIR", kind: "string" },
  { flag: "cache-dir", key: "cacheDir", env: "HOTLINE_CACHE_DIR", kind: "string" },
  { flag: "system-config-dir", key: "systemConfigDir", env: "HOTLINE_SYSTEM_CONFIG_DIR", kind: "string" },
  { flag: "allow-origin", key: "allowedOrigins", env: "HOTLINE_ALLOWED_ORIGINS", kind: "list" },
  { flag: "max-payload", key: "maxPayloadBytes", env: "HOTLINE_MAX_PAYLOAD", kind: "number", min: 1024, max: GIB },
  { flag: "output-cap", key: "outputCapBytes", env: "HOTLINE_OUTPUT_CAP", kind: "number", min: 16 * 1024 },
  { flag: "output-budget", key: "outputBudgetBytes", env: "HOTLINE_OUTPUT_BUDGET", kind: "number" },
  { flag: "retain-jobs", key: "retainJobs", env: "HOTLINE_RETAIN_JOBS", kind: "number" },
  { flag: "heartbeat-ms", key: "heartbeatMs", env: "HOTLINE_HEARTBEAT_MS", kind: "number", min: 100, max: 3_600_000 },
  { flag: "max-connections", key: "maxConnections", env: "HOTLINE_MAX_CONNECTIONS", kind: "number", min: 1, max: 100_000 },
  { flag: "nixpkgs", key: "nixpkgs", env: "HOTLINE_NIXPKGS", kind: "string" },
  { flag: "github-api", key: "githubApi", env: "HOTLINE_GITHUB_API", kind: "string" },
  { flag: "workspace-root", key: "workspaceRoot", env: "HOTLINE_WORKSPACE_ROOT", kind: "string" },
  { flag: "idle-exit", key: "idleExitMinutes", env: "HOTLINE_IDLE_EXIT", kind: "number", fraction: true },
  {
    flag: "log-level",
    key: "logLevel",
    env: "HOTLINE_LOG_LEVEL",
    kind: "string",
    choices: ["fatal", "error", "warn", "info", "debug", "trace", "silent"],
  },
  { flag: "public-url", key: "publicUrl", env: "HOTLINE_PUBLIC_URL", kind: "string" },
  { flag: "allow-host", key: "allowedHosts", env: "HOTLINE_ALLOWED_HOSTS", kind: "list" },
  { flag: "preview-url", key: "previewUrl", env: "HOTLINE_PREVIEW_URL", kind: "string" },
  { flag: "display", key: "display", env: "HOTLINE_DISPLAY", kind: "string" },
  { flag: "vnc", key: "vnc", env: "HOTLINE_VNC", kind: "string" },
  { flag: "cache-push", key: "environmentCache.push", env: "HOTLINE_CACHE_PUSH", kind: "string" },
  { flag: "cache-secret-key-file", key: "environmentCache.secretKeyFile", env: "HOTLINE_CACHE_SECRET_KEY_FILE", kind: "string" },
  { flag: "cache-substituter", key: "environmentCache.substituters", env: "HOTLINE_CACHE_SUBSTITUTERS", kind: "list" },
  { flag: "cache-trusted-public-key", key: "environmentCache.trustedPublicKeys", env: "HOTLINE_CACHE_TRUSTED_PUBLIC_KEYS", kind: "list" },
  { flag: "ssh", key: "ssh", env: "HOTLINE_SSH", kind: "string" },
  { flag: "ssh-host", key: "sshHost", env: "HOTLINE_SSH_HOST", kind: "string" },
  { flag: "ssh-port", key: "sshPort", env: "HOTLINE_SSH_PORT", kind: "number" },
  { flag: "public-ssh", key: "publicSsh", env: "HOTLINE_PUBLIC_SSH", kind: "string" },
  { flag: "ssh-max-connections", key: "sshMaxConnections", env: "HOTLINE_SSH_MAX_CONNECTIONS", kind: "number" },
  { flag: "ssh-max-channels", key: "sshMaxChannels", env: "HOTLINE_SSH_MAX_CHANNELS", kind: "number" },
  { flag: "ssh-forward-any", key: "sshForwardAny", env: "HOTLINE_SSH_FORWARD_ANY", kind: "string" },
  { flag: "ssh-login-grace-ms", key: "sshLoginGraceMs", env: "HOTLINE_SSH_LOGIN_GRACE_MS", kind: "number" },
  { flag: "token-file", key: "tokenFile", env: "HOTLINE_TOKEN_FILE", kind: "string" },
  { flag: "metrics", key: "metrics", env: "HOTLINE_METRICS", kind: "string", choices: ["on", "off"] },
  { flag: "metrics-interval-ms", key: "metricsIntervalMs", env: "HOTLINE_METRICS_INTERVAL_MS", kind: "number", min: 250, max: 60_000 },
];

/** The nixpkgs revision prepare pins new package definitions to, unless configured otherwise. */
export const DEFAULT_NIXPKGS = "github:NixOS/nixpkgs/50ab793786d9de88ee30ec4e4c24fb4236fc2674";

function xdg(envName: string, fallback: string, env: NodeJS.ProcessEnv): string {
  const value = env[envName];
  return value?.startsWith("/") ? join(value, "hotline") : join(homedir(), fallback, "hotline");
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
    maxConnections: 64,
    nixpkgs: DEFAULT_NIXPKGS,
    githubApi: "https://api.github.com",
    workspaceRoot: "/workspace",
    idleExitMinutes: 0,
    logLevel: "info",
    environmentCache: { substituters: [], trustedPublicKeys: [] },
    allowedHosts: ["localhost", "127.0.0.1", "::1"],
    ssh: "on",
    sshPort: 2222,
    sshMaxConnections: 64,
    sshMaxChannels: 128,
    sshForwardAny: "off",
    sshLoginGraceMs: 30_000,
    metrics: "on",
    metricsIntervalMs: 2000,
    ...(env.DISPLAY ? { display: env.DISPLAY } : {}),
  };
}

const ROWS = new Map<string, Setting>(SETTINGS.map((s) => [s.key, s]));

/** An unknown key's refusal, with the nearest known one. */
function unknownKey(where: string, key: string, known: readonly string[]): ActionError {
  const near = nearest(key, known);
  const hint = near && !known.includes(key) ? ` (did you mean ${JSON.stringify(near)}?)` : "";
  return new ActionError("invalid_request", `${where}: unknown key ${JSON.stringify(key)}${hint}; known keys: ${known.join(", ")}`);
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
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new ActionError("invalid_request", `${path} must hold a JSON object`);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(parsed)) {
    if (!(FILE_KEYS as readonly string[]).includes(k)) throw unknownKey(path, k, FILE_KEYS);
    const row = ROWS.get(k);
    out[k] = k === "environmentCache" ? cacheSection(v, path) : row ? checkValue(row, v, `${path}: ${k}`) : v;
  }
  return out as Partial<Config>;
}

/** The `environmentCache` object of a config file: known keys only, strings and string lists. */
function cacheSection(v: unknown, path: string): Partial<EnvironmentCacheConfig> {
  const where = `${path}: environmentCache`;
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw new ActionError("invalid_request", `${where} must be an object {push, secretKeyFile?, substituters?, trustedPublicKeys?}`);
  for (const [k, value] of Object.entries(v)) {
    if (!(CACHE_FILE_KEYS as readonly string[]).includes(k)) throw unknownKey(where, k, CACHE_FILE_KEYS);
    checkValue(ROWS.get(`environmentCache.${k}`)!, value, `${where}.${k}`);
  }
  return v as Partial<EnvironmentCacheConfig>;
}

/**
 * Builds the one frozen config: flags > HOTLINE_* environment > <config>/config.json >
 * <systemConfigDir>/config.json > defaults. `flags` are `--name value` pairs already split from argv.
 */
export function loadConfig(flags: Record<string, string | string[] | undefined>, env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const fromEnvAndFlags: Record<string, unknown> = {};
  const cacheFromEnvAndFlags: Record<string, unknown> = {};
  for (const s of SETTINGS) {
    const target = s.key.startsWith("environmentCache.") ? cacheFromEnvAndFlags : fromEnvAndFlags;
    const key = s.key.replace(/^environmentCache\./, "");
    const envValue = env[s.env];
    if (envValue !== undefined && envValue !== "") target[key] = coerce(s, envValue, s.env);
    const flagValue = flags[s.flag];
    if (flagValue !== undefined) {
      const raw = Array.isArray(flagValue) ? flagValue.join(",") : flagValue;
      target[key] = coerce(s, raw, `--${s.flag}`);
    }
  }
  const base = defaults(env);
  const systemDir = (fromEnvAndFlags.systemConfigDir as string | undefined) ?? base.systemConfigDir;
  const configDir = (fromEnvAndFlags.configDir as string | undefined) ?? base.configDir;
  const systemFile = readConfigFile(join(systemDir, "config.json"));
  const userFile = readConfigFile(join(configDir, "config.json"));
  const merged = { ...base, ...systemFile, ...userFile, ...fromEnvAndFlags } as Config;
  // The cache section merges field by field, with the same precedence as top-level settings.
  merged.environmentCache = checkEnvironmentCache({
    ...base.environmentCache,
    ...systemFile.environmentCache,
    ...userFile.environmentCache,
    ...cacheFromEnvAndFlags,
  } as EnvironmentCacheConfig);
  for (const key of ["stateDir", "configDir", "cacheDir", "systemConfigDir", "workspaceRoot"] as const) merged[key] = resolve(merged[key]);
  if (merged.publicUrl !== undefined) merged.publicUrl = checkPublicUrl(merged.publicUrl);
  if (merged.tokenFile !== undefined) merged.tokenFile = resolve(merged.tokenFile);
  checkSsh(merged);
  return Object.freeze({
    ...merged,
    allowedOrigins: Object.freeze([...merged.allowedOrigins]),
    allowedHosts: Object.freeze([...merged.allowedHosts]),
  });
}

/** Environment variable names that belong to the daemon and never reach a job. */
export function isDaemonVariable(name: string): boolean {
  return name.startsWith("HOTLINE_");
}
