import { execFileSync, type ExecFileSyncOptions } from "node:child_process";
import { cpSync, createReadStream, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, normalize, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import pino from "pino";
import type { ProgressUpdate, RunContext } from "../../daemon/runners/context.js";
import { nixArgs } from "../../daemon/runners/nix-cli.js";
import { nixSystem } from "../../daemon/system.js";

const here = dirname(fileURLToPath(import.meta.url));
/** The offline nixpkgs stand-in (a path flake). */
export const STANDIN = resolve(here, "../fixtures/nixpkgs-standin");
export const STANDIN_REF = `path:${STANDIN}`;
export const SYSTEM = nixSystem();

/** A fresh temp directory removed after the test file. */
export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `hotline-${prefix}-`));
}

/** A copy of the stand-in whose binaries report `release` (a different pin for the same packages). */
export function standinCopy(release: string): string {
  const dir = tempDir("standin");
  cpSync(STANDIN, dir, { recursive: true });
  writeFileSync(join(dir, "release"), `${release}\n`);
  return dir;
}

/** A workspace holding the repository-flake fixture, pointed at the stand-in. */
export function repoFlakeWorkspace(): string {
  const ws = tempDir("repo");
  const src = resolve(here, "../fixtures/nix-repo-flake");
  cpSync(join(src, "nix"), join(ws, "nix"), { recursive: true });
  const text = readFileSync(join(src, "flake.nix.in"), "utf8").replaceAll("@STANDIN@", STANDIN).replaceAll("@SYSTEM@", SYSTEM);
  writeFileSync(join(ws, "flake.nix"), text);
  return ws;
}

/** A RunContext that records output and progress, with its own AbortController. */
export function recordingContext() {
  const controller = new AbortController();
  const chunks: string[] = [];
  const progress: ProgressUpdate[] = [];
  const ctx: RunContext = {
    signal: controller.signal,
    log: pino({ level: "silent" }),
    output: (_stream, data) => chunks.push(typeof data === "string" ? data : data.toString("utf8")),
    progress: (u) => progress.push(u),
  };
  return { ctx, controller, progress, output: () => chunks.join("") };
}

/** Temp directories a test file makes (`fresh`) or adopts (`track`), all removed by `cleanup` (call it in afterAll). */
export function scratchDirs() {
  const dirs: string[] = [];
  const track = (dir: string) => {
    dirs.push(dir);
    return dir;
  };
  return { fresh: (prefix: string) => track(tempDir(prefix)), track, cleanup: () => cleanup(...dirs) };
}

export /** Serves a directory over HTTP on 127.0.0.1 (a binary cache written by `nix copy --to file://`). */
function serveDir(root: string): Promise<Server> {
  const server = createServer((req, res) => {
    const path = normalize(join(root, decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname)));
    if (!path.startsWith(root)) return void res.writeHead(403).end();
    try {
      const st = statSync(path);
      if (!st.isFile()) throw new Error("not a file");
      res.writeHead(200, { "content-length": st.size });
      if (req.method === "HEAD") return void res.end();
      createReadStream(path).pipe(res);
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

export function cleanup(...dirs: string[]): void {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}

export function ensureDir(dir: string): string {
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Runs `nix` as the daemon does: the experimental features on the command line, never from nix.conf. */
export function nixCli(args: string[], opts: ExecFileSyncOptions = {}): string {
  return String(execFileSync("nix", nixArgs(args), { encoding: "utf8", ...opts }));
}

/**
 * Environment for a Nix that reads no nix.conf of this machine or user and has no experimental
 * feature enabled: only the offline settings tests need (no sandbox, no build users, no substituters).
 */
export function bareNixEnv(dir: string): Record<string, string> {
  const conf = join(ensureDir(dir), "nix.conf");
  writeFileSync(conf, "");
  writeFileSync(join(dir, "registry.json"), '{"flakes":[],"version":2}\n');
  return {
    NIX_CONF_DIR: dir,
    NIX_USER_CONF_FILES: conf,
    NIX_CONFIG: [
      "sandbox = false",
      "build-users-group =",
      "substituters =",
      `flake-registry = ${join(dir, "registry.json")}`,
      "fallback = false",
    ].join("\n"),
  };
}
