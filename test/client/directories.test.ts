import { describe, expect, it } from "vitest";
import { loadConfig } from "../../daemon/config.js";
import { hotlineDirectories } from "../../client/directories.js";

/**
 * client/directories.ts restates the daemon's directory rules (the client must not import the
 * daemon); this holds the two together for every combination that decides them.
 */
describe("the client finds the directories the daemon uses", () => {
  const envs: Array<Record<string, string>> = [];
  for (const stateDir of [undefined, "", "/srv/state", "relative/state"])
    for (const configDir of [undefined, "", "/srv/config"])
      for (const xdgState of [undefined, "", "/xdg/state", "not-absolute"])
        for (const xdgConfig of [undefined, "/xdg/config", "not-absolute"]) {
          const env: Record<string, string> = { HOTLINE_SYSTEM_CONFIG_DIR: "/nonexistent-hotline-etc" };
          if (stateDir !== undefined) env.HOTLINE_STATE_DIR = stateDir;
          if (configDir !== undefined) env.HOTLINE_CONFIG_DIR = configDir;
          if (xdgState !== undefined) env.XDG_STATE_HOME = xdgState;
          if (xdgConfig !== undefined) env.XDG_CONFIG_HOME = xdgConfig;
          envs.push(env);
        }
  const flagSets: Array<{ "state-dir"?: string; "config-dir"?: string }> = [
    {},
    { "state-dir": "/flag/state" },
    { "config-dir": "flag/config" },
    { "state-dir": "s", "config-dir": "/c" },
  ];

  it.each(flagSets)("with flags %j, in every environment combination", (flags) => {
    for (const env of envs) {
      const daemon = loadConfig(flags, env);
      const client = hotlineDirectories({ stateDir: flags["state-dir"], configDir: flags["config-dir"], env });
      expect({ env, stateDir: client.stateDir, configDir: client.configDir }).toEqual({
        env,
        stateDir: daemon.stateDir,
        configDir: daemon.configDir,
      });
    }
  });
});
