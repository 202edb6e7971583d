// Build: compile TypeScript, embed the guide (its core and sections, see daemon/guide.ts), record version + commit,
// and write the published JSON Schemas (schemas/, committed and shipped in the package).
import { execFileSync } from "node:child_process";
import { copyFileSync, cpSync, mkdirSync, readFileSync, rmSync, writeFileSync, chmodSync } from "node:fs";
import { dirname, join } from "node:path";
import { bundleEntries } from "./bundle.mjs";
import { runningDaemonOf } from "./running-daemon.mjs";

const root = new URL("..", import.meta.url).pathname;

// A running daemon of this checkout still loads files from dist/ (lazy imports, the guide): a build
// would swap them under it, mixing two versions in one process. Stop it first.
const running = runningDaemonOf(root);
if (running) {
  console.error(
    `build: refusing to replace dist/ under the running daemon of this checkout (pid ${running.pid}: ${running.command}); stop it first (kill ${running.pid}), then build`,
  );
  process.exit(75);
}
let typeErrors = false;
try {
  execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", join(root, "tsconfig.json")], { stdio: "inherit" });
} catch {
  typeErrors = true; // tsc still emitted; finish the build so the failure is the only thing reported
}

// The code-context drivers (a Python file, a Node script) are data the daemon ships and runs, not
// TypeScript: copied as they are, without their tests, caches and notes.
const driversOut = join(root, "dist/daemon/code/drivers");
rmSync(driversOut, { recursive: true, force: true });
cpSync(join(root, "daemon/code/drivers"), driversOut, {
  recursive: true,
  filter: (src) => !/\/(test_[^/]*\.py|[^/]*\.test\.mjs|__pycache__|[^/]*\.pyc|[^/]*\.md|\.gitignore)$/.test(src),
});

// The browser pages (web/, DOM code with its own tsconfig): type-checked, then bundled with xterm.js
// from node_modules into dist/web, so the daemon serves every asset itself (never from a CDN).
try {
  execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", join(root, "web/tsconfig.json")], {
    stdio: "inherit",
  });
} catch {
  typeErrors = true;
}
const webOut = join(root, "dist/web");
rmSync(webOut, { recursive: true, force: true });
const { build: bundle } = await import("esbuild");
await bundle({
  entryPoints: [join(root, "web/terminal.ts"), join(root, "web/console.ts"), join(root, "web/desktop.ts")],
  bundle: true,
  format: "iife",
  target: "es2022",
  minify: true,
  legalComments: "eof",
  outdir: webOut,
  logLevel: "warning",
});
for (const file of ["terminal.html", "console.html", "desktop.html", "page.css"]) copyFileSync(join(root, "web", file), join(webOut, file));
copyFileSync(join(root, "node_modules/@xterm/xterm/css/xterm.css"), join(webOut, "xterm.css"));

// The guide: guide/NN-*.md are its sections, guide/core/*.md the compact core state.guide serves
// first (daemon/guide.ts); guide.md is the whole text, guide.json every part as served.
const { readGuide } = await import(join(root, "dist/daemon/guide.js"));
const { ACTIONS } = await import(join(root, "dist/protocol/index.js"));
const guide = readGuide(
  join(root, "guide"),
  ACTIONS.map((a) => a.name),
);
mkdirSync(join(root, "dist/guide"), { recursive: true });
writeFileSync(join(root, "dist/guide/guide.md"), guide.all);
writeFileSync(join(root, "dist/guide/guide.json"), `${JSON.stringify(guide)}\n`);
// The MCP tool list (descriptions from the guide's rules), built once here, not in every MCP session.
const { toolCatalog, CATALOG_FILE } = await import(join(root, "dist/mcp/tools.js"));
writeFileSync(join(root, "dist/mcp", CATALOG_FILE), `${JSON.stringify(toolCatalog({ text: guide.all, sections: guide.sections }))}\n`);

// An image build has no .git: it passes the commit in HOTLINE_BUILD_COMMIT instead.
let commit = process.env.HOTLINE_BUILD_COMMIT || "unknown";
if (!process.env.HOTLINE_BUILD_COMMIT)
  try {
    commit = execFileSync("git", ["rev-parse", "HEAD"], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {}
const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
writeFileSync(join(root, "dist/build-info.json"), `${JSON.stringify({ version, commit })}\n`);

// The shell sessions' bash driver is data the daemon ships beside its module (daemon/sessions/driver.ts).
copyFileSync(join(root, "daemon/sessions/driver.bash"), join(root, "dist/daemon/sessions/driver.bash"));

// schemas/ is rebuilt from nothing, so a schema of a removed action cannot linger.
const { publishedSchemas } = await import(join(root, "dist/protocol/json-schema.js"));
const schemaDir = join(root, "schemas");
rmSync(schemaDir, { recursive: true, force: true });
for (const [path, schema] of publishedSchemas()) {
  mkdirSync(dirname(join(schemaDir, path)), { recursive: true });
  writeFileSync(join(schemaDir, path), `${JSON.stringify(schema, null, 2)}\n`);
}
// The request validators, compiled once here instead of at every daemon start (daemon/dispatch/validators.ts).
const { requestValidatorsModule } = await import(join(root, "dist/daemon/dispatch/compile.js"));
const { GENERATED_VALIDATORS } = await import(join(root, "dist/daemon/dispatch/validators.js"));
writeFileSync(join(root, "dist/daemon/dispatch", GENERATED_VALIDATORS), requestValidatorsModule(ACTIONS));

// The CLI and the daemon, bundled (README: Start-up): resolving and reading ~600 modules one by
// one cost more than everything else a start does. dist/cli/main.js and dist/daemon/main.js, the
// paths every launcher runs, become stubs that import the bundle; the rest of dist/ stays as tsc
// wrote it (the client library, worker threads, the imports of this script).
await bundleEntries(root, {
  cli: { source: "cli/main.ts", launcher: "dist/cli/main.js", stub: (bundle) => `await import("${bundle}");\n` },
  daemon: {
    source: "daemon/entry.ts",
    launcher: "dist/daemon/main.js",
    stub: (bundle) =>
      `const { runDaemonCommand } = await import("${bundle}");\nconst args = process.argv.slice(2);\nrunDaemonCommand(args[0] === "daemon" ? args.slice(1) : args);\n`,
  },
});
chmodSync(join(root, "dist/cli/main.js"), 0o755);

if (typeErrors) {
  console.error("build: TypeScript reported errors");
  process.exit(1);
}
