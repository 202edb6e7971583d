import { homedir } from "node:os";
import { join, resolve } from "node:path";

/** Where to look for a local daemon; each field wins over the environment, like the CLI's flags. */
export interface DirectoryOptions {
  /** Like `--state-dir`: where the daemon writes daemon.json. */
  stateDir?: string;
  /** Like `--config-dir`: where the daemon keeps its token file. */
  configDir?: string;
  /** The environment to read HOTLINE_* and XDG_* from (default: process.env). */
  env?: NodeJS.ProcessEnv;
}

function xdg(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const value = env[name];
  // XDG says relative values are invalid and must be ignored.
  return value?.startsWith("/") ? join(value, "hotline") : join(homedir(), fallback, "hotline");
}

function pick(explicit: string | undefined, env: NodeJS.ProcessEnv, name: string, fallback: () => string): string {
  const fromEnv = env[name];
  return resolve(explicit ?? (fromEnv !== undefined && fromEnv !== "" ? fromEnv : fallback()));
}

/**
 * The daemon's state and config directories by the daemon's own rules (daemon/config.ts):
 * option > HOTLINE_STATE_DIR / HOTLINE_CONFIG_DIR > $XDG_STATE_HOME / $XDG_CONFIG_HOME > ~/.local/state, ~/.config.
 * Written out here because the client must not import the daemon; test/client/directories.test.ts
 * checks that both agree.
 */
export function hotlineDirectories(options: DirectoryOptions = {}): { stateDir: string; configDir: string } {
  const env = options.env ?? process.env;
  return {
    stateDir: pick(options.stateDir, env, "HOTLINE_STATE_DIR", () => xdg(env, "XDG_STATE_HOME", ".local/state")),
    configDir: pick(options.configDir, env, "HOTLINE_CONFIG_DIR", () => xdg(env, "XDG_CONFIG_HOME", ".config")),
  };
}
