/**
 * The environment combinations that decide where the daemon's state and config directories are
 * (HOTLINE_*_DIR, XDG_*_HOME: unset, empty, absolute, relative), and the flag sets over them. The
 * Node client's test (test/client/directories.test.ts) and the Python client's
 * (test/python/python-client.test.ts) check their discovery against the daemon on this one table.
 */
export const DIRECTORY_ENVS: Array<Record<string, string>> = [];
for (const stateDir of [undefined, "", "/srv/state", "relative/state"])
  for (const configDir of [undefined, "", "/srv/config"])
    for (const xdgState of [undefined, "", "/xdg/state", "not-absolute"])
      for (const xdgConfig of [undefined, "/xdg/config", "not-absolute"]) {
        const env: Record<string, string> = { HOTLINE_SYSTEM_CONFIG_DIR: "/nonexistent-hotline-etc" };
        if (stateDir !== undefined) env.HOTLINE_STATE_DIR = stateDir;
        if (configDir !== undefined) env.HOTLINE_CONFIG_DIR = configDir;
        if (xdgState !== undefined) env.XDG_STATE_HOME = xdgState;
        if (xdgConfig !== undefined) env.XDG_CONFIG_HOME = xdgConfig;
        DIRECTORY_ENVS.push(env);
      }

export const DIRECTORY_FLAG_SETS: Array<{ "state-dir"?: string; "config-dir"?: string }> = [
  {},
  { "state-dir": "/flag/state" },
  { "config-dir": "flag/config" },
  { "state-dir": "s", "config-dir": "/c" },
];
