import { describe, expect, it } from "vitest";
import { loadConfig } from "../../daemon/config.js";
import { hotlineDirectories } from "../../client/directories.js";
import { DIRECTORY_ENVS, DIRECTORY_FLAG_SETS } from "../helpers/directory-envs.js";

/**
 * client/directories.ts restates the daemon's directory rules (the client must not import the
 * daemon); this holds the two together for every combination that decides them.
 */
describe("the client finds the directories the daemon uses", () => {
  it.each(DIRECTORY_FLAG_SETS)("with flags %j, in every environment combination", (flags) => {
    for (const env of DIRECTORY_ENVS) {
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
