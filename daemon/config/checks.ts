import { ActionError } from "../../protocol/errors.js";

/**
 * A Nix binary cache prepared environments are shared through: `push` is the store URL a
 * successful prepare copies its closure to (signed with the key in `secretKeyFile` — a file, never
 * a value); `substituters`/`trustedPublicKeys` are passed to every Nix call of prepare.
 */
export interface EnvironmentCacheConfig {
  /** Store URL a successful prepare copies its closure to. */
  push?: string;
  /** File holding the signing key (nix-store --generate-binary-cache-key); never the key itself. */
  secretKeyFile?: string;
  substituters: readonly string[];
  trustedPublicKeys: readonly string[];
}

const STORE_URL = /^(file|https?|s3|ssh|ssh-ng|gs|local|daemon|unix):\/\/?[^\s]*$|^(local|daemon|auto)$/;

/** Refuses a cache setting Nix would misread; the secret key must be a file path (never a key itself). */
export function checkEnvironmentCache(c: EnvironmentCacheConfig): EnvironmentCacheConfig {
  for (const url of [...(c.push ? [c.push] : []), ...c.substituters]) {
    if (!STORE_URL.test(url))
      throw new ActionError(
        "invalid_request",
        `environmentCache: ${JSON.stringify(url)} is not a Nix store URL (e.g. file:///var/cache/nix, https://cache.example.org, s3://bucket)`,
      );
  }
  for (const key of c.trustedPublicKeys) {
    if (!/^[^\s:]+:[A-Za-z0-9+/]{43}=$/.test(key))
      throw new ActionError(
        "invalid_request",
        `environmentCache: trusted public key ${JSON.stringify(key)} is not "name:base64" as nix-store --generate-binary-cache-key writes it`,
      );
  }
  // The path travels as a store URL parameter (?secret-key=…), so it must not carry URL syntax.
  if (c.secretKeyFile !== undefined && !/^\/[^\s?&#%]*$/.test(c.secretKeyFile)) {
    throw new ActionError(
      "invalid_request",
      `environmentCache.secretKeyFile must be an absolute path to the key file without spaces, ?, &, # or %, got ${JSON.stringify(c.secretKeyFile)}`,
    );
  }
  if (c.secretKeyFile !== undefined && c.push === undefined)
    throw new ActionError(
      "invalid_request",
      "environmentCache.secretKeyFile is set but push is not; set push to the store URL to sign for",
    );
  return Object.freeze({
    ...c,
    substituters: Object.freeze([...c.substituters]),
    trustedPublicKeys: Object.freeze([...c.trustedPublicKeys]),
  });
}

/** publicUrl must be an http(s) origin with at most a path (links append /web/…); kept without a trailing slash. */
export function checkPublicUrl(raw: string): string {
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:") || url.search || url.hash || url.username || url.password) {
    throw new ActionError(
      "invalid_request",
      `publicUrl must be an http:// or https:// address without query, fragment or credentials (e.g. https://7070-sandbox.example), got ${JSON.stringify(raw)}`,
    );
  }
  return url.href.replace(/\/+$/, "");
}

/** The SSH settings of a config. */
export interface SshSettings {
  ssh: string;
  sshForwardAny: string;
  sshPort: number;
  sshMaxConnections: number;
  sshMaxChannels: number;
  sshLoginGraceMs: number;
  publicSsh?: string;
}

/** The SSH settings: on/off switches, whole-number budgets, a port, publicSsh as host:port. */
export function checkSsh(c: SshSettings): void {
  for (const key of ["ssh", "sshForwardAny"] as const)
    if (c[key] !== "on" && c[key] !== "off")
      throw new ActionError("invalid_request", `${key} must be "on" or "off", got ${JSON.stringify(c[key])}`);
  if (!Number.isInteger(c.sshPort) || c.sshPort < 0 || c.sshPort > 65535)
    throw new ActionError("invalid_request", `sshPort must be 0..65535, got ${c.sshPort}`);
  for (const key of ["sshMaxConnections", "sshMaxChannels", "sshLoginGraceMs"] as const)
    if (!Number.isInteger(c[key]) || c[key] < 1)
      throw new ActionError("invalid_request", `${key} must be a whole number of at least 1, got ${c[key]}`);
  if (c.publicSsh !== undefined && !/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/.test(c.publicSsh))
    throw new ActionError(
      "invalid_request",
      `publicSsh must be host:port (e.g. ssh.sandbox.example:443 or [::1]:2222), got ${JSON.stringify(c.publicSsh)}`,
    );
}
