import { describe, expect, it } from "vitest";
import { Ajv, type ValidateFunction } from "ajv";
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { ACTIONS } from "../protocol/index.js";
import { publishedSchemas } from "../protocol/json-schema.js";
import { guideParts, guideText, jsonExamples } from "./helpers/guide.js";

const ROOT = new URL("../", import.meta.url).pathname;
const SCHEMA_DIR = join(ROOT, "schemas/");

function isGitCheckout(): boolean {
  try {
    return (
      execFileSync("git", ["rev-parse", "--is-inside-work-tree"], {
        cwd: ROOT,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      }).trim() === "true"
    );
  } catch {
    return false;
  }
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [relative(SCHEMA_DIR, path)];
  });
}

const committed = new Map(filesUnder(SCHEMA_DIR).map((path) => [path, JSON.parse(readFileSync(join(SCHEMA_DIR, path), "utf8")) as object]));

describe("published JSON Schemas (schemas/)", () => {
  it("are exactly what the build produces from protocol/: no stale file, none missing, none changed", () => {
    const built = publishedSchemas();
    expect([...committed.keys()].sort(), "run npm run build and commit schemas/").toEqual([...built.keys()].sort());
    for (const [path, schema] of built) expect(committed.get(path), path).toEqual(JSON.parse(JSON.stringify(schema)));
  });

  // npm test builds first, and the build rewrites schemas/: only git can tell that what the
  // build wrote differs from what was committed.
  it.skipIf(!isGitCheckout())("are committed as the build wrote them (git sees no change under schemas/)", () => {
    const changed = execFileSync("git", ["status", "--porcelain", "--", "schemas/"], { cwd: ROOT, encoding: "utf8" });
    expect(changed, "run npm run build and commit schemas/").toBe("");
  });

  // strict mode: an unknown keyword or a malformed schema is an error, not a warning.
  const ajv = new Ajv({ strict: true, allErrors: false });
  const compiled = new Map<string, ValidateFunction>();
  for (const [path, schema] of committed) if (path !== "index.json") compiled.set(path, ajv.compile(schema));
  const schema = (path: string): ValidateFunction => {
    const validate = compiled.get(path);
    expect(validate, `schemas/${path}`).toBeDefined();
    return validate!;
  };

  it("has params, result and request schemas for every action, all compiling", () => {
    for (const action of ACTIONS) for (const part of ["params", "result", "request"]) schema(`actions/${action.name}.${part}.json`);
    const index = committed.get("index.json") as { actions: Array<{ name: string }> };
    expect(index.actions.map((a) => a.name)).toEqual(ACTIONS.map((a) => a.name));
  });

  const examples = jsonExamples(`${guideText()}\n${guideParts().core}`);
  const requests = examples.filter((e) => typeof e.action === "string");

  it.each(requests.map((r) => [r.action as string, r] as const))("validates the guide's %s example request", (action, request) => {
    const envelope = schema("request.json");
    expect(envelope(request), JSON.stringify(envelope.errors)).toBe(true);
    const { id: _id, action: _action, ...params } = request;
    const validateParams = schema(`actions/${action}.params.json`);
    expect(validateParams(params), JSON.stringify(validateParams.errors)).toBe(true);
    const whole = schema(`actions/${action}.request.json`);
    expect(whole(request), JSON.stringify(whole.errors)).toBe(true);
  });

  it("validates the guide's example replies and events", () => {
    const replies = examples.filter((e) => "ok" in e);
    const events = examples.filter((e) => typeof e.event === "string");
    expect(replies.length).toBeGreaterThan(0);
    for (const reply of replies) expect(schema("reply.json")(reply), JSON.stringify(reply)).toBe(true);
    for (const event of events) {
      const validate = schema(`events/${String(event.event)}.json`);
      expect(validate(event), `${JSON.stringify(event)}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
  });

  it("refuses what the daemon refuses (the schemas are not vacuous)", () => {
    expect(schema("actions/shell.params.json")({ command: 5 })).toBe(false);
    expect(schema("actions/shell.request.json")({ action: "shell", command: "true", bogus: 1 })).toBe(false);
    expect(schema("request.json")({ action: "no.such.action" })).toBe(false);
    expect(schema("error.json")({ code: "nope", message: "x" })).toBe(false);
  });
});
