// Bundles the CLI and the daemon from their TypeScript sources into dist/bundle/ (ES modules, split
// into chunks at every dynamic import, so a command or a first request loads only what it uses),
// and writes the stubs launchers run.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";

/** Packages left to Node's loader: native addons and the files they open beside themselves. */
const EXTERNAL = ["node-pty", "ssh2", "cpu-features", "bufferutil", "utf-8-validate"];

/**
 * Each entry `name: {source, launcher, stub}`: `source` (a .ts file) is bundled as
 * dist/bundle/<name>.js, and `launcher` (a path in dist/ that launchers run) becomes
 * `stub(<its relative import of the bundle>)`, keeping the shebang tsc gave it.
 */
export async function bundleEntries(root, entries) {
  const outdir = join(root, "dist/bundle");
  rmSync(outdir, { recursive: true, force: true });
  const { build } = await import("esbuild");
  await build({
    entryPoints: Object.fromEntries(Object.entries(entries).map(([name, e]) => [name, join(root, e.source)])),
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    tsconfig: join(root, "tsconfig.json"),
    outdir,
    chunkNames: "[name]-[hash]",
    external: EXTERNAL,
    logLevel: "warning",
    // CommonJS packages inside an ES module bundle still call require() for Node's built-ins.
    banner: { js: 'import { createRequire as __hotlineRequire } from "node:module";\nconst require = __hotlineRequire(import.meta.url);' },
    plugins: [moduleUrlsInDist(root, outdir)],
  });
  for (const [name, e] of Object.entries(entries)) {
    const launcher = join(root, e.launcher);
    const shebang = /^#!.*\n/.exec(readFileSync(launcher, "utf8"))?.[0] ?? "";
    const spec = `./${relative(dirname(launcher), join(outdir, `${name}.js`))}`.replace(/^\.\/\.\.\//, "../");
    writeFileSync(launcher, `${shebang}${STUB_PRELUDE}${e.stub(spec)}`);
  }
}

/**
 * The head of every stub: V8's compile cache where Node has one (`module.enableCompileCache`, Node ≥
 * 22.1; Node 20 has none and skips it), kept per user, never in a directory others can write; then
 * the bundle is imported (dynamically, so the cache is on before it loads).
 */
const STUB_PRELUDE = `// Written by scripts/build.mjs: the code is bundled in dist/bundle/ (scripts/bundle.mjs).
import module from "node:module";
import { homedir } from "node:os";
import { join } from "node:path";
module.enableCompileCache?.(join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "hotline", "compile-cache"));
`;

/**
 * Inside the bundle a module's `import.meta.url` still means its own file as tsc emits it in dist/
 * (worker scripts, the guide, build-info.json, the generated validators and nix-templates/ are
 * found beside it), not the chunk it landed in: every chunk is in `outdir`, so that file is a
 * fixed relative URL from there.
 */
function moduleUrlsInDist(root, outdir) {
  return {
    name: "module-urls-in-dist",
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, (args) => {
        if (args.path.includes("/node_modules/")) return undefined;
        const text = readFileSync(args.path, "utf8");
        if (!text.includes("import.meta.url")) return undefined;
        const emitted = join(root, "dist", relative(root, args.path)).replace(/\.ts$/, ".js");
        const own = `new URL(${JSON.stringify(relative(outdir, emitted))}, import.meta.url).href`;
        return { contents: text.replaceAll("import.meta.url", own), loader: "ts" };
      });
    },
  };
}
