import { describe, expect, it } from "vitest";
import { DAEMON_NODE_FLAGS, missingNodeFlags } from "./node-flags.js";

describe("missingNodeFlags", () => {
  it("names the launcher flags given neither on the command line nor in NODE_OPTIONS", () => {
    expect(missingNodeFlags([], "")).toEqual([...DAEMON_NODE_FLAGS]);
    expect(missingNodeFlags(["--max-semi-space-size=1"], "--v8-pool-size=1")).toEqual([]);
    expect(missingNodeFlags(["--max-semi-space-size=1"], "")).toEqual(["--v8-pool-size=1"]);
  });
});
