import { describe, expect, it } from "vitest";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { useDaemon } from "./helpers/daemon.js";

describe("state.info directories", () => {
  const ctx = useDaemon();

  it("names the workspace root and every directory a client may need, where the daemon really writes", async () => {
    const { daemon, client } = ctx;
    const info = await client.ok("state.info");
    const root = daemon.dirs.root;
    expect(info.directories).toEqual({
      state: daemon.dirs.state,
      config: daemon.dirs.config,
      cache: daemon.dirs.cache,
      systemConfig: join(root, "etc"),
      workspaceRoot: join(root, "workspace"),
      repos: join(root, "workspace", "project", "repos"),
      tasks: join(root, "workspace", "tasks"),
      jobs: join(daemon.dirs.state, "jobs"),
      environments: join(daemon.dirs.cache, "environments", info.system),
      snapshots: join(daemon.dirs.state, "snapshots"),
      bundles: join(daemon.dirs.state, "bundles"),
    });
    // The paths are the ones in use, not a description of them.
    expect(existsSync(join(info.directories.config, "token"))).toBe(true);
    expect(existsSync(join(info.directories.state, "daemon.json"))).toBe(true);
    const { job } = await client.ok("shell", { command: "echo kept", wait: 10_000 });
    expect(readdirSync(info.directories.jobs).some((name) => name.includes(job.id))).toBe(true);
  });
});
