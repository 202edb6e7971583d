import { describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { ACTIONS, ERROR_CODES } from "../protocol/index.js";
import { HANDLERS } from "../daemon/actions/index.js";
import { compileRequestValidators } from "../daemon/dispatch/validate.js";
import { withDaemon } from "./helpers/daemon.js";
import { guideText, jsonExamples } from "./helpers/guide.js";

const guide = guideText();

describe("the guide documents the protocol completely", () => {
  const examples = jsonExamples(guide);
  const requests = examples.filter((e) => typeof e.action === "string");
  const validators = compileRequestValidators(ACTIONS);

  it("has a handler for every action and an action for every handler", () => {
    expect(Object.keys(HANDLERS).sort()).toEqual(ACTIONS.map((a) => a.name).sort());
    for (const [name, handler] of Object.entries(HANDLERS)) expect(handler.definition.name, `HANDLERS[${JSON.stringify(name)}]`).toBe(name);
  });

  it.each(ACTIONS.map((a) => a.name))("documents %s with a heading and a valid example", (name) => {
    const heading = guide.split("\n").some((l) => /^#{2,4} /.test(l) && l.includes(`\`${name}\``));
    expect(heading, `a heading naming \`${name}\``).toBe(true);
    const mine = requests.filter((r) => r.action === name);
    expect(mine.length, `a json example request for ${name}`).toBeGreaterThan(0);
    for (const example of mine) {
      const validate = validators.get(name)!;
      expect(validate(example), `${JSON.stringify(example)}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
  });

  it("has no example of an action that does not exist", () => {
    const known = new Set<string>(ACTIONS.map((a) => a.name));
    expect(requests.filter((r) => !known.has(r.action as string)).map((r) => r.action)).toEqual([]);
  });

  it.each(Object.keys(ERROR_CODES))("documents error code %s", (code) => {
    expect(guide).toContain(`\`${code}\``);
  });

  it("is served by state.guide exactly as built, with the SHA-256 of the bytes returned", async () => {
    await withDaemon({}, async (_daemon, client) => {
      const served = await client.ok("state.guide");
      expect(served.text).toBe(guide);
      expect(served.sha256).toBe(createHash("sha256").update(served.text, "utf8").digest("hex"));
      const info = await client.ok("state.info");
      expect(info.actions.map((a: { name: string }) => a.name).sort()).toEqual(ACTIONS.map((a) => a.name).sort());
      expect(served.version).toBe(info.version);
    });
  });
});
