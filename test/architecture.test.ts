import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = new URL("../", import.meta.url).pathname;

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return sources(path);
    return path.endsWith(".ts") && !path.endsWith(".test.ts") ? [path] : [];
  });
}

/** Repository-relative paths a file imports (static and dynamic), without the .js suffix. */
function localImports(file: string, text = readFileSync(join(ROOT, file), "utf8")): string[] {
  const specs = [...text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)].map((m) => m[1]!);
  return specs.map((s) => relative(ROOT, resolve(ROOT, dirname(file), s)).replace(/\.js$/, ""));
}

/** The domain folders and everything above them in the dependency direction. */
const DOMAIN_AND_ABOVE = [
  "daemon/nix/",
  "daemon/workspace/",
  "daemon/features/",
  "daemon/actions/",
  "daemon/dispatch/",
  "daemon/server/",
  "daemon/main",
];

/** Folder → folders it must never import (the dependency direction of README's architecture table). */
const FORBIDDEN: Record<string, string[]> = {
  "protocol/": ["daemon/", "cli/", "bench/", "test/"],
  "daemon/jobs/": [
    "daemon/actions/",
    "daemon/dispatch/",
    "daemon/server/",
    "daemon/nix/",
    "daemon/workspace/",
    "daemon/main",
    "daemon/runners/",
    "daemon/metrics/",
  ],
  "daemon/runners/": [
    "daemon/jobs/",
    "daemon/actions/",
    "daemon/dispatch/",
    "daemon/server/",
    "daemon/nix/",
    "daemon/workspace/",
    "daemon/main",
  ],
  "daemon/nix/": ["daemon/actions/", "daemon/dispatch/", "daemon/server/", "daemon/main"],
  "daemon/workspace/": ["daemon/actions/", "daemon/dispatch/", "daemon/server/", "daemon/main"],
  "daemon/fs/": ["daemon/actions/", "daemon/dispatch/", "daemon/server/", "daemon/main"],
  // The browser pages' links reach the actions through an interface of theirs (Services.links), not an import.
  "daemon/actions/": ["daemon/dispatch/", "daemon/server/", "daemon/web/", "daemon/main"],
  // Feature wiring (what main.ts builds for the handlers) sits below the actions that use it.
  "daemon/features/": ["daemon/actions/", "daemon/dispatch/", "daemon/server/", "daemon/web/", "daemon/main"],
  // A job's environment is composed from the resolver seam; it knows no domain and no job.
  "daemon/environment/": [...DOMAIN_AND_ABOVE, "daemon/jobs/", "daemon/runners/"],
  "daemon/tokens/": [...DOMAIN_AND_ABOVE, "daemon/jobs/", "daemon/runners/", "daemon/environment/"],
  // Small shared mechanisms: everything may use them, so they use nothing of the daemon's.
  "daemon/util/": [...DOMAIN_AND_ABOVE, "daemon/jobs/", "daemon/runners/", "daemon/environment/", "daemon/tokens/", "daemon/config"],
  // The event-loop watchdog: entry points everywhere (dispatch, jobs, HTTP routes) mark their work in it.
  "daemon/watchdog/": [...DOMAIN_AND_ABOVE, "daemon/jobs/", "daemon/runners/", "daemon/environment/", "daemon/tokens/", "daemon/config"],
  "daemon/dispatch/": ["daemon/server/", "daemon/main"],
  "daemon/server/": ["daemon/main"],
  // The browser pages' route and links: beside the server (its HTTP seam and page access), never the actions.
  "daemon/web/": [
    "daemon/actions/",
    "daemon/dispatch/",
    "daemon/jobs/",
    "daemon/runners/",
    "daemon/nix/",
    "daemon/workspace/",
    "daemon/fs/",
    "daemon/features/",
    "daemon/main",
  ],
  // The SSH server: tokens, jobs, runners, environment and process control; never the actions or other listeners.
  "daemon/ssh/": [
    "daemon/actions/",
    "daemon/dispatch/",
    "daemon/server/",
    "daemon/nix/",
    "daemon/workspace/",
    "daemon/features/",
    "daemon/fs/",
    "daemon/web/",
    "daemon/main",
  ],
  // Previews: the port table and the host-routed proxy, beside the server (it routes to them), never the actions.
  "daemon/preview/": [
    "daemon/actions/",
    "daemon/dispatch/",
    "daemon/server/",
    "daemon/jobs/",
    "daemon/runners/",
    "daemon/nix/",
    "daemon/workspace/",
    "daemon/fs/",
    "daemon/features/",
    "daemon/web/",
    "daemon/main",
  ],
  // The desktop (display probe, capture, input, the CDP and VNC relays): tools through runners and
  // util, tokens for the relays; never the domains, the actions or the server above it.
  "daemon/desktop/": [...DOMAIN_AND_ABOVE, "daemon/jobs/", "daemon/web/", "daemon/fs/"],
  // Process control is a leaf: node only, so every layer (runners, jobs, nix, workspace) may use it.
  "daemon/process/": [
    "protocol/",
    "daemon/actions/",
    "daemon/dispatch/",
    "daemon/server/",
    "daemon/jobs/",
    "daemon/runners/",
    "daemon/nix/",
    "daemon/workspace/",
    "daemon/environment/",
    "daemon/tokens/",
    "daemon/util/",
    "daemon/config",
    "daemon/main",
    "daemon/logger",
    "daemon/activity",
  ],
  // The sampler, the ring of samples and the Prometheus registry: jobs (read), process control and
  // the protocol below it; the actions (state.metrics), the /metrics route and main.ts above it.
  "daemon/metrics/": [
    "daemon/actions/",
    "daemon/dispatch/",
    "daemon/server/",
    "daemon/runners/",
    "daemon/nix/",
    "daemon/workspace/",
    "daemon/features/",
    "daemon/fs/",
    "daemon/web/",
    "daemon/ssh/",
    "daemon/preview/",
    "daemon/desktop/",
    "daemon/tokens/",
    "daemon/main",
  ],
  // The long-lived child behind sessions and code contexts: jobs, process control and util; never its faces or anything above.
  "daemon/repl/": [
    ...DOMAIN_AND_ABOVE,
    "daemon/sessions/",
    "daemon/code/",
    "daemon/environment/",
    "daemon/runners/",
    "daemon/tokens/",
    "daemon/fs/",
    "daemon/web/",
    "daemon/config",
  ],
  // Shell sessions: a face of daemon/repl, with the job environment; never the actions or anything above them.
  "daemon/sessions/": [...DOMAIN_AND_ABOVE, "daemon/code/", "daemon/runners/", "daemon/tokens/", "daemon/fs/", "daemon/web/"],
  // Code contexts: the other face of daemon/repl, with the job environment; never the actions, the sessions or anything above them.
  "daemon/code/": [...DOMAIN_AND_ABOVE, "daemon/sessions/", "daemon/runners/", "daemon/tokens/", "daemon/fs/", "daemon/web/"],
  "client/": ["daemon/", "cli/", "bench/", "test/"],
  // The MCP server is a client of the daemon like any program: the typed client and the protocol only.
  "mcp/": ["daemon/", "cli/", "bench/", "test/"],
  // The CLI is a client too: hotline/client, the protocol, the MCP server for `hotline mcp`, the
  // settings table for `hotline daemon --help`, and daemon/entry only for `hotline daemon` (below).
  "cli/": [
    "daemon/actions/",
    "daemon/dispatch/",
    "daemon/server/",
    "daemon/jobs/",
    "daemon/runners/",
    "daemon/nix/",
    "daemon/workspace/",
    "daemon/fs/",
    "daemon/features/",
    "daemon/environment/",
    "daemon/tokens/",
    "daemon/util/",
    "daemon/process/",
    "daemon/web/",
    "daemon/preview/",
    "daemon/desktop/",
    "bench/",
    "test/",
  ],
};

/** The one door between jobs and runners: the RunContext type a job hands its runner. */
const ALLOWED_SEAM = "daemon/runners/context";

/** Each import of a file in `folder` that its rule forbids, as "file → target" (`text` stands in for a file's contents). */
function violations(files: string[], folder: string, text?: string): string[] {
  return files
    .filter((f) => f.startsWith(folder))
    .flatMap((f) =>
      localImports(f, text)
        .filter((target) => target !== ALLOWED_SEAM && FORBIDDEN[folder]!.some((bad) => target.startsWith(bad)))
        .map((target) => `${f} → ${target}`),
    );
}

/** The import cycles among `files` (strongly connected components of two or more files, Tarjan's algorithm), each sorted. */
function importCycles(files: string[], read = (f: string) => readFileSync(join(ROOT, f), "utf8")): string[][] {
  const graph = new Map(files.map((f) => [f.replace(/\.ts$/, ""), localImports(f, read(f))]));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of graph.get(v)!) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component = stack.splice(stack.indexOf(v));
    if (component.length > 1) cycles.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

describe("dependencies point one way", () => {
  const files = [...sources("protocol"), ...sources("daemon"), ...sources("cli"), ...sources("client"), ...sources("mcp")];

  it.each(Object.keys(FORBIDDEN))("%s imports nothing it must not", (folder) => {
    expect(violations(files, folder)).toEqual([]);
  });

  it.each(Object.keys(FORBIDDEN))("a forbidden import in %s fails its rule", (folder) => {
    // A file in the folder importing the first folder it must not (by a relative path, as code does): the rule must see it.
    const file = folder.endsWith("/") ? `${folder}probe.ts` : `${folder}-probe.ts`;
    const forbidden = FORBIDDEN[folder]![0]!;
    const target = forbidden.endsWith("/") ? `${forbidden}x` : forbidden;
    const text = `import { x } from "${relative(dirname(join(ROOT, file)), join(ROOT, target))}.js";\nexport const y = x;\n`;
    expect(violations([file], folder, text)).toEqual([`${file} → ${target}`]);
  });

  it("no two files import each other, directly or around a loop (type imports count: a cycle is a tie either way)", () => {
    expect(importCycles(files)).toEqual([]);
  });

  it("a cycle fails the cycle rule", () => {
    const texts: Record<string, string> = {
      "daemon/nix/a.ts": 'import type { B } from "./b.js";\n',
      "daemon/nix/b.ts": 'import { c } from "./c.js";\n',
      "daemon/nix/c.ts": 'import { a } from "./a.js";\n',
    };
    expect(importCycles(Object.keys(texts), (f) => texts[f]!)).toEqual([["daemon/nix/a", "daemon/nix/b", "daemon/nix/c"]]);
  });

  it("sees static and dynamic imports (so the rules above can fail)", () => {
    expect(localImports("daemon/main.ts")).toContain("daemon/server/server");
    expect(localImports("cli/main.ts")).toContain("daemon/entry");
  });

  it("the daemon loads mcp/ and the MCP SDK only by dynamic import (idle RSS and job starts must not pay for them)", () => {
    // Value imports only: `import type` is erased by tsc and loads nothing.
    const loaded = files
      .filter((f) => f.startsWith("daemon/"))
      .flatMap((f) =>
        [...readFileSync(join(ROOT, f), "utf8").matchAll(/^import\s+(?!type\s)[^;]*?from\s+"([^"]+)"/gm)].map((m) => `${f} → ${m[1]}`),
      )
      .filter((edge) => edge.includes("/mcp/") || edge.includes("@modelcontextprotocol/"));
    expect(loaded).toEqual([]);
    expect(localImports("daemon/mcp-route.ts")).toContain("mcp/http");
  });

  it("only the CLI's `hotline daemon` reaches daemon/entry, and only the entry (once it holds the lock) daemon/main", () => {
    expect(files.filter((f) => localImports(f).includes("daemon/entry"))).toEqual(["cli/main.ts"]);
    expect(files.filter((f) => localImports(f).includes("daemon/main"))).toEqual(["daemon/entry.ts"]);
  });
});
