import { describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { ACTIONS, ERROR_CODES } from "../protocol/index.js";
import { HANDLERS } from "../daemon/actions/index.js";
import { compileRequestValidators } from "../daemon/dispatch/compile.js";
import { CLI_MAIN, withDaemon } from "./helpers/daemon.js";
import { guideParts, jsonExamples } from "./helpers/guide.js";

const parts = guideParts();
const guide = parts.all;
const sha256 = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex");

/** What the core may weigh: an agent reads it every session. */
const CORE_MAX_BYTES = 24 * 1024;

describe("the guide documents the protocol completely", () => {
  const validators = compileRequestValidators(ACTIONS);
  const requestsOf = (text: string) => jsonExamples(text).filter((e) => typeof e.action === "string");
  const requests = requestsOf(guide);

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

  it("has no example of an action that does not exist, in the sections or the core", () => {
    const known = new Set<string>(ACTIONS.map((a) => a.name));
    expect([...requests, ...requestsOf(parts.core)].filter((r) => !known.has(r.action as string)).map((r) => r.action)).toEqual([]);
  });

  it("gives every action a section that documents it under its own heading", () => {
    const documented = new Set(parts.sections.flatMap((s) => s.actions));
    expect(ACTIONS.map((a) => a.name).filter((a) => !documented.has(a))).toEqual([]);
  });

  it.each(Object.keys(ERROR_CODES))("documents error code %s, in the sections and in the core", (code) => {
    expect(guide).toContain(`\`${code}\``);
    expect(parts.core).toContain(`\`${code}\``);
  });
});

describe("the guide's core", () => {
  const validators = compileRequestValidators(ACTIONS);
  const examples = jsonExamples(parts.core).filter((e) => typeof e.action === "string");

  it(`is at most ${CORE_MAX_BYTES} bytes`, () => {
    expect(Buffer.byteLength(parts.core)).toBeLessThanOrEqual(CORE_MAX_BYTES);
    expect(Buffer.byteLength(parts.core)).toBeLessThan(Buffer.byteLength(guide) / 3);
  });

  it("has one index line for every section, each naming a real one", () => {
    const index = parts.core.slice(parts.core.indexOf("\n## Sections\n"));
    const lines = index.split("\n").filter((l) => l.startsWith("- "));
    const named = lines.map((l) => /^- `([a-z0-9-]+)` — \S/.exec(l)?.[1]);
    expect(named.every(Boolean), lines.filter((_, i) => !named[i]).join("\n")).toBe(true);
    expect(named).toEqual(parts.sections.map((s) => s.name));
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(200);
  });

  it("points only at sections that exist", () => {
    const names = new Set(parts.sections.map((s) => s.name));
    for (const m of parts.core.matchAll(/section `([a-z0-9-]+)`/g)) expect(names, m[0]).toContain(m[1]);
  });

  it("gives the common actions one valid example each", () => {
    const common = ["shell", "jobs.status", "jobs.output", "jobs.wait", "jobs.input", "jobs.cancel", "jobs.list", "jobs.follow"];
    const more = ["files.read", "files.write", "files.edit", "files.list", "files.search", "files.download", "prepare"];
    const workspace = ["repos.add", "tasks.create", "tasks.commit", "tasks.merge"];
    for (const name of [...common, ...more, ...workspace])
      expect(examples.filter((e) => e.action === name).length, name).toBeGreaterThan(0);
    for (const example of examples) {
      const validate = validators.get(example.action as string)!;
      expect(validate(example), `${JSON.stringify(example)}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
  });
});

describe("state.guide", () => {
  it("serves the core by default, each section and the whole text, each with the SHA-256 of the bytes returned", async () => {
    await withDaemon({}, async (_daemon, client) => {
      const core = await client.ok("state.guide");
      expect(core.section).toBe("core");
      expect(core.text).toBe(parts.core);
      expect(core.sha256).toBe(sha256(core.text));
      expect(core.sections.map((s: { name: string }) => s.name)).toEqual(parts.sections.map((s) => s.name));
      const all = await client.ok("state.guide", { section: "all" });
      expect(all.text).toBe(guide);
      expect(all.sha256).toBe(sha256(guide));
      for (const section of parts.sections) {
        const served = await client.ok("state.guide", { section: section.name });
        expect(served.text, section.name).toBe(section.text);
        expect(served.sha256).toBe(sha256(section.text));
        expect(core.sections.find((s: { name: string }) => s.name === section.name).bytes).toBe(Buffer.byteLength(section.text));
      }
      // An action name is the section that documents it.
      const byAction = await client.ok("state.guide", { section: "files.write" });
      expect(byAction.section).toBe("filesystem");
      expect(byAction.text).toContain("### `files.write`");
      const info = await client.ok("state.info");
      expect(info.actions.map((a: { name: string }) => a.name).sort()).toEqual(ACTIONS.map((a) => a.name).sort());
      expect(core.version).toBe(info.version);
    });
  });

  it("answers an unknown section with invalid_request at /section listing the sections", async () => {
    await withDaemon({}, async (_daemon, client) => {
      const reply = await client.call("state.guide", { section: "nosuch" });
      expect(reply.ok).toBe(false);
      const error = reply.error as { code: string; path: string; message: string; details: { sections: string[] } };
      expect(error.code).toBe("invalid_request");
      expect(error.path).toBe("/section");
      const names = ["core", "all", ...parts.sections.map((s) => s.name)];
      expect(error.details.sections).toEqual(names);
      for (const name of names) expect(error.message).toContain(name);
    });
  });

  it("hotline state guide [SECTION] prints the core, a section or all", async () => {
    await withDaemon({}, async (daemon) => {
      const run = (...args: string[]) =>
        spawnSync(process.execPath, [CLI_MAIN, "state", "guide", ...args], { env: daemon.cliEnv, encoding: "utf8" });
      expect(run().stdout).toBe(parts.core);
      expect(run("jobs").stdout).toBe(parts.sections.find((s) => s.name === "jobs")!.text);
      expect(run("all").stdout).toBe(guide);
      const bad = run("nosuch");
      expect(bad.status).toBe(1);
      expect(bad.stderr).toContain("filesystem");
    });
  });

  it("is built into dist/guide as the texts served", () => {
    const built = JSON.parse(readFileSync(new URL("../dist/guide/guide.json", import.meta.url), "utf8"));
    expect(built).toEqual(parts);
  });
});
