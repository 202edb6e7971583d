import { createHash, randomBytes } from "node:crypto";
import { execFile, execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI_MAIN, TestDaemon, type TestClient } from "../helpers/daemon.js";
import { toolAvailable } from "../helpers/tools.js";
import { STANDIN_REF } from "../nix/helpers.js";
import { createGzip } from "node:zlib";
import { buildTar, writeZeroTar } from "./archive-builders.js";
import { serveBytes, type startServer } from "./helpers.js";

const BODY = randomBytes(2 * 1024 * 1024);
const SHA = createHash("sha256").update(BODY).digest("hex");
const hasNix = toolAvailable("nix");

describe("files.* through the real daemon", () => {
  let daemon: TestDaemon;
  let client: TestClient;
  let scratch: string;
  let server: Awaited<ReturnType<typeof startServer>>;
  let n = 0;
  const fresh = () => {
    const d = join(scratch, `d${n++}`);
    mkdirSync(d);
    return d;
  };

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), "hotline-files-e2e-"));
    const routes: Parameters<typeof startServer>[0] = {
      "/file.bin": serveBytes(BODY),
      "/SUMS": (_q, res) => res.writeHead(200).end(`${"0".repeat(64)}  other.bin\n${SHA}  file.bin\n`),
      "/dotfile": serveBytes(Buffer.from("alias ls='rm -rf ~'\n"), '"v1"', { "content-disposition": 'attachment; filename=".bashrc"' }),
      "/slow": (_q, res) => {
        res.writeHead(200, { "content-length": 50 * 1024 * 1024 });
        res.write(Buffer.alloc(256 * 1024, 1)); // and then nothing
      },
      "/repos/acme/tool/releases/tags/v1": (_q, res) =>
        res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            tag_name: "v1",
            assets: [
              { name: "tool-linux.bin", size: BODY.length, browser_download_url: `${server.url}/file.bin` },
              { name: "tool-mac.bin", size: 1, browser_download_url: `${server.url}/x` },
            ],
          }),
        ),
    };
    server = await startServerOutsideTest(routes);
    daemon = await TestDaemon.start({ args: ["--github-api", server.url], env: { HOTLINE_NIXPKGS: STANDIN_REF } });
    client = await daemon.client();
  });
  afterAll(async () => {
    await client?.close();
    await daemon?.stop();
    daemon?.cleanup();
    server?.server.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("downloads with wait: the job succeeds with path, size, sha256 and byte progress", async () => {
    const dir = fresh();
    const { job } = await client.ok("files.download", {
      url: `${server.url}/file.bin`,
      dest: join(dir, "f.bin"),
      sha256: SHA,
      wait: 30_000,
    });
    expect(job).toMatchObject({
      kind: "files.download",
      state: "succeeded",
      result: { path: join(dir, "f.bin"), size: BODY.length, sha256: SHA, url: `${server.url}/file.bin` },
    });
    expect(job.progress).toMatchObject({ phase: "done", unit: "bytes", done: BODY.length, total: BODY.length });
    expect(readFileSync(join(dir, "f.bin")).equals(BODY)).toBe(true);
    const out = await client.ok("jobs.output", { job: job.id });
    expect(out.data).toContain(`sha256 ${SHA}`);
  });

  it("checks a download against its entry in a sums file in the same call", async () => {
    const dir = fresh();
    const sha256sums = { url: `${server.url}/SUMS` };
    const { job } = await client.ok("files.download", { url: `${server.url}/file.bin`, dest: `${dir}/`, sha256sums, wait: 30_000 });
    expect(job).toMatchObject({ state: "succeeded", result: { path: join(dir, "file.bin"), sha256: SHA } });
    const missing = await client.ok("files.download", {
      url: `${server.url}/file.bin`,
      dest: `${dir}/x`,
      sha256sums: { ...sha256sums, name: "nope.bin" },
      wait: 30_000,
    });
    expect(missing.job.error).toMatchObject({
      code: "invalid_request",
      path: "/sha256sums/name",
      details: { entries: ["other.bin", "file.bin"] },
    });
  });

  it("a download's result names the check it passed: the sums file and entry, or the request's sha256", async () => {
    const dir = fresh();
    const bySums = await client.ok("files.download", {
      url: `${server.url}/file.bin`,
      dest: `${dir}/`,
      sha256sums: { url: `${server.url}/SUMS` },
      wait: 30_000,
    });
    expect(bySums.job.result.verified).toEqual({ sha256: SHA, against: "SUMS", entry: "file.bin", url: `${server.url}/SUMS` });
    const out = await client.ok("jobs.output", { job: bySums.job.id });
    expect(out.data).toContain("verified against SUMS (file.bin)");
    const byHash = await client.ok("files.download", {
      url: `${server.url}/file.bin`,
      dest: join(dir, "h.bin"),
      sha256: SHA,
      wait: 30_000,
    });
    expect(byHash.job.result.verified).toEqual({ sha256: SHA, against: "sha256" });
    const unchecked = await client.ok("files.download", { url: `${server.url}/file.bin`, dest: join(dir, "u.bin"), wait: 30_000 });
    expect(unchecked.job.result.verified).toBeUndefined();
    const release = await client.ok("files.download", {
      github: { repo: "acme/tool", tag: "v1", asset: "*linux*" },
      dest: join(dir, "r.bin"),
      sha256sums: { url: `${server.url}/SUMS`, name: "file.bin" },
      wait: 30_000,
    });
    expect(release.job.result.verified).toMatchObject({ sha256: SHA, against: "SUMS", entry: "file.bin" });
  });

  it("files.extract's result lists the top-level entries it made (at most 100, marked when there are more)", async () => {
    const dir = fresh();
    mkdirSync(join(dir, "src/tool-1.2/bin"), { recursive: true });
    writeFileSync(join(dir, "src/tool-1.2/bin/tool"), "x");
    writeFileSync(join(dir, "src/README.md"), "x");
    execFileSync("tar", ["-czf", join(dir, "a.tgz"), "-C", join(dir, "src"), "tool-1.2", "README.md"]);
    const small = await client.ok("files.extract", { archive: join(dir, "a.tgz"), dest: join(dir, "small"), wait: 30_000 });
    expect(small.job.result).toMatchObject({ topLevel: ["README.md", "tool-1.2/"] });
    expect(small.job.result.topLevelTruncated).toBeUndefined();
    const stripped = await client.ok("files.extract", { archive: join(dir, "a.tgz"), dest: join(dir, "stripped"), strip: 1, wait: 30_000 });
    expect(stripped.job.result.topLevel).toEqual(["bin/"]);

    mkdirSync(join(dir, "flat"));
    for (let i = 0; i < 150; i++) writeFileSync(join(dir, "flat", `f${String(i).padStart(3, "0")}`), "x");
    execFileSync("tar", ["-cf", join(dir, "flat.tar"), "-C", join(dir, "flat"), ...readdirSync(join(dir, "flat"))]);
    const flat = await client.ok("files.extract", { archive: join(dir, "flat.tar"), dest: join(dir, "flat-out"), wait: 30_000 });
    expect(flat.job.result).toMatchObject({ entries: 150, topLevelTruncated: true });
    expect(flat.job.result.topLevel).toHaveLength(100);
    expect(new Set(flat.job.result.topLevel).size).toBe(100);
    const out = await client.ok("jobs.output", { job: flat.job.id });
    expect(out.data).toMatch(/f\d{3}, …\n$/);
  });

  it("downloads a GitHub release asset through the configured API", async () => {
    const dir = fresh();
    const { job } = await client.ok("files.download", {
      github: { repo: "acme/tool", tag: "v1", asset: "*linux*" },
      dest: `${dir}/`,
      wait: 30_000,
    });
    expect(job.state, JSON.stringify(job.error)).toBe("succeeded");
    expect(job.result).toMatchObject({ asset: "tool-linux.bin", tag: "v1", sha256: SHA, path: join(dir, "file.bin") });
  });

  it("refuses a server-chosen dotfile name for a download into a directory, even with overwrite, and takes it when the client names the file", async () => {
    const dir = fresh();
    writeFileSync(join(dir, ".bashrc"), "mine\n");
    const { job } = await client.ok("files.download", { url: `${server.url}/dotfile`, dest: `${dir}/`, overwrite: true, wait: 30_000 });
    expect(job.state).toBe("failed");
    expect(job.error).toMatchObject({ code: "invalid_request", path: "/dest", details: { name: ".bashrc" } });
    expect(job.error.message).toContain("give the file name yourself in dest");
    expect(readdirSync(dir)).toEqual([".bashrc"]);
    expect(readFileSync(join(dir, ".bashrc"), "utf8")).toBe("mine\n");
    const named = await client.ok("files.download", {
      url: `${server.url}/dotfile`,
      dest: join(dir, ".bashrc"),
      overwrite: true,
      wait: 30_000,
    });
    expect(named.job.state).toBe("succeeded");
    expect(readFileSync(join(dir, ".bashrc"), "utf8")).toContain("alias");
  });

  it("creates missing parent directories with parents: true for download (file or directory dest) and extract (never dest itself)", async () => {
    const dir = fresh();
    const missing = await client.ok("files.download", { url: `${server.url}/file.bin`, dest: join(dir, "a", "b", "f.bin"), wait: 30_000 });
    expect(missing.job.error).toMatchObject({ code: "not_found", path: "/dest" });
    const { job } = await client.ok("files.download", {
      url: `${server.url}/file.bin`,
      dest: join(dir, "a", "b", "f.bin"),
      parents: true,
      wait: 30_000,
    });
    expect(job.state, JSON.stringify(job.error)).toBe("succeeded");
    expect(readFileSync(join(dir, "a", "b", "f.bin")).equals(BODY)).toBe(true);
    const into = await client.ok("files.download", {
      url: `${server.url}/file.bin`,
      dest: `${join(dir, "c", "d")}/`,
      parents: true,
      wait: 30_000,
    });
    expect(into.job.result).toMatchObject({ path: join(dir, "c", "d", "file.bin") });
    writeFileSync(join(dir, "t.tar"), await buildTar([{ header: { name: "x.txt" }, data: Buffer.from("x") }]));
    const refused = await client.ok("files.extract", { archive: join(dir, "t.tar"), dest: join(dir, "e", "f", "out"), wait: 30_000 });
    expect(refused.job.error).toMatchObject({ code: "not_found", path: "/dest" });
    const extracted = await client.ok("files.extract", {
      archive: join(dir, "t.tar"),
      dest: join(dir, "e", "f", "out"),
      parents: true,
      wait: 30_000,
    });
    expect(extracted.job.state, JSON.stringify(extracted.job.error)).toBe("succeeded");
    expect(readdirSync(join(dir, "e", "f"))).toEqual(["out"]);
    expect(readFileSync(join(dir, "e", "f", "out", "x.txt"), "utf8")).toBe("x");
    writeFileSync(join(dir, "file"), "");
    const blocked = await client.ok("files.extract", {
      archive: join(dir, "t.tar"),
      dest: join(dir, "file", "sub", "out"),
      parents: true,
      wait: 30_000,
    });
    expect(blocked.job.error).toMatchObject({ code: "conflict", path: "/dest", message: expect.stringContaining("a file is in the way") });
  });

  it("fails the job on a wrong hash with both hashes, leaving the directory empty", async () => {
    const dir = fresh();
    const { job } = await client.ok("files.download", {
      url: `${server.url}/file.bin`,
      dest: join(dir, "f.bin"),
      sha256: "a".repeat(64),
      wait: 30_000,
    });
    expect(job.state).toBe("failed");
    expect(job.error).toMatchObject({ code: "invalid_request", path: "/sha256", details: { expected: "a".repeat(64), actual: SHA } });
    expect(readdirSync(dir)).toEqual([]);
  });

  it("refuses bad requests in the reply itself", async () => {
    const scheme = await client.call("files.download", { url: "file:///etc/passwd", dest: "/tmp/x" });
    expect(scheme.error).toMatchObject({ code: "invalid_request", path: "/url" });
    const both = await client.call("files.download", { dest: "/tmp/x" });
    expect(both.error).toMatchObject({ code: "invalid_request", path: "/url" });
    const repo = await client.call("files.download", { github: { repo: "../x", tag: "v1", asset: "*" }, dest: "/tmp/x" });
    expect(repo.error).toMatchObject({ code: "invalid_request", path: "/github/repo" });
    const sums = { url: `${server.url}/SUMS` };
    const twice = await client.call("files.download", { url: `${server.url}/file.bin`, dest: "/tmp/x", sha256: SHA, sha256sums: sums });
    expect(twice.error).toMatchObject({ code: "invalid_request", path: "/sha256sums" });
    const asset = await client.call("files.download", { url: `${server.url}/file.bin`, dest: "/tmp/x", sha256sums: { asset: "SUMS" } });
    expect(asset.error).toMatchObject({ code: "invalid_request", path: "/sha256sums/asset" });
    const sumsUrl = await client.call("files.download", {
      url: `${server.url}/file.bin`,
      dest: "/tmp/x",
      sha256sums: { url: "ftp://x/S" },
    });
    expect(sumsUrl.error).toMatchObject({ code: "invalid_request", path: "/sha256sums/url" });
    const rel = await client.call("files.extract", { archive: "a.tar", dest: "/tmp/x" });
    expect(rel.error).toMatchObject({ code: "invalid_request", path: "/archive" });
  });

  it("cancels a download mid-body: the job ends cancelled and the partial file is gone", async () => {
    const dir = fresh();
    const { job } = await client.ok("files.download", { url: `${server.url}/slow`, dest: join(dir, "big") });
    await client.ok("jobs.follow", { job: job.id });
    await client.waitFor((f) => f.event === "job.progress" && f.job === job.id && f.progress.done > 0, 30_000, "download progress");
    expect(readdirSync(dir)).toHaveLength(1);
    await client.ok("jobs.cancel", { job: job.id });
    const exit = await client.waitForExit(job.id);
    expect(exit.status.state).toBe("cancelled");
    expect(readdirSync(dir)).toEqual([]);
  });

  it("times out a stalled download with timeoutMs and removes the partial file", async () => {
    const dir = fresh();
    const { job } = await client.ok("files.download", { url: `${server.url}/slow`, dest: join(dir, "big"), timeoutMs: 300, wait: 30_000 });
    expect(job.state).toBe("timed_out");
    expect(readdirSync(dir)).toEqual([]);
  });

  it("extracts a tar.gz with strip, and refuses a hostile one naming the entry with no trace", async () => {
    const dir = fresh();
    mkdirSync(join(dir, "src/pkg/bin"), { recursive: true });
    writeFileSync(join(dir, "src/pkg/bin/tool"), "#!/bin/sh\necho tool\n", { mode: 0o755 });
    execFileSync("tar", ["-czf", join(dir, "a.tgz"), "-C", join(dir, "src"), "pkg"]);
    const ok = await client.ok("files.extract", { archive: join(dir, "a.tgz"), dest: join(dir, "out"), strip: 1, wait: 30_000 });
    expect(ok.job).toMatchObject({
      kind: "files.extract",
      state: "succeeded",
      result: { format: "tar.gz", dest: join(dir, "out"), bytes: 20 },
    });
    expect(execFileSync(join(dir, "out/bin/tool"), { encoding: "utf8" })).toBe("tool\n");

    writeFileSync(
      join(dir, "evil.tar"),
      await buildTar([
        { header: { name: "ok" }, data: Buffer.from("x") },
        { header: { name: "a/../../escape" }, data: Buffer.from("x") },
      ]),
    );
    const bad = await client.ok("files.extract", { archive: join(dir, "evil.tar"), dest: join(dir, "evil"), wait: 30_000 });
    expect(bad.job.state).toBe("failed");
    expect(bad.job.error).toMatchObject({ code: "invalid_request", details: { entry: "a/../../escape" } });
    const exists = await client.ok("files.extract", { archive: join(dir, "a.tgz"), dest: join(dir, "out"), wait: 30_000 });
    expect(exists.job.error).toMatchObject({ code: "conflict", path: "/dest" });
    expect(readdirSync(dir).sort()).toEqual(["a.tgz", "evil.tar", "out", "src"]);
  });

  it("cancels an extraction mid-way: the job ends cancelled and no temporary directory is left", async () => {
    const dir = fresh();
    await writeZeroTar(join(dir, "zeros.tgz"), "zeros.bin", 600 * 1024 * 1024, createGzip({ level: 1 }));
    const { job } = await client.ok("files.extract", { archive: join(dir, "zeros.tgz"), dest: join(dir, "out") });
    await client.ok("jobs.follow", { job: job.id });
    await client.waitFor((f) => f.event === "job.progress" && f.job === job.id && f.progress.done > 0, 30_000, "extraction progress");
    await client.ok("jobs.cancel", { job: job.id });
    const exit = await client.waitForExit(job.id);
    expect(exit.status.state).toBe("cancelled");
    expect(readdirSync(dir)).toEqual(["zeros.tgz"]);
  });

  it("runs scripts with bash, sh and python3 chosen by parameter, shebang or extension", async () => {
    const dir = fresh();
    writeFileSync(join(dir, "a.sh"), 'echo "bash $BASH_VERSINFO $1"\n');
    writeFileSync(join(dir, "b"), '#!/bin/sh\necho "sh $0 $1"\n');
    writeFileSync(join(dir, "c.py"), "import sys\nprint('py', sys.version_info[0], sys.argv[1])\n");
    writeFileSync(join(dir, "d.txt"), "#!/usr/bin/env python3\nimport os\nprint('cwd', os.getcwd())\n");
    const run = async (params: Record<string, unknown>) =>
      (await client.ok("files.run", { wait: 30_000, ...params })) as { job: any; output: any };
    const a = await run({ path: join(dir, "a.sh"), args: ["x"] });
    expect(a.job).toMatchObject({ kind: "files.run", state: "succeeded", exitCode: 0 });
    expect(a.output.data).toMatch(/^bash \d+ x\n$/);
    expect((await run({ path: join(dir, "b"), args: ["y"] })).output.data).toBe(`sh ${join(dir, "b")} y\n`);
    expect((await run({ path: join(dir, "c.py"), args: ["z"] })).output.data).toBe("py 3 z\n");
    expect((await run({ path: join(dir, "d.txt") })).output.data).toBe(`cwd ${dir}\n`);
    expect((await run({ path: join(dir, "c.py"), interpreter: "bash", args: ["q"] })).job.state).toBe("failed");
  });

  it("refuses an interpreter it does not run and a script it cannot classify", async () => {
    const dir = fresh();
    writeFileSync(join(dir, "x.rb"), "puts 1\n");
    writeFileSync(join(dir, "z.sh"), "#!/bin/zsh\necho\n");
    const ruby = await client.call("files.run", { path: join(dir, "x.rb"), interpreter: "ruby" });
    expect(ruby.error).toMatchObject({ code: "invalid_request", path: "/interpreter" });
    const unknown = await client.call("files.run", { path: join(dir, "x.rb") });
    expect(unknown.error).toMatchObject({ code: "invalid_request", path: "/path" });
    const zsh = await client.call("files.run", { path: join(dir, "z.sh") });
    expect(zsh.error.message).toContain("#!/bin/zsh");
  });

  it("gives files.run the shell job's env, stdin, timeout and cancel", async () => {
    const dir = fresh();
    writeFileSync(join(dir, "env.sh"), 'echo "$GREETING"; read line; echo "got $line"\n');
    const r = await client.ok("files.run", { path: join(dir, "env.sh"), env: { GREETING: "hi" }, stdin: "typed\n", wait: 30_000 });
    expect(r.output.data).toBe("hi\ngot typed\n");
    writeFileSync(join(dir, "sleep.sh"), "echo started; exec sleep 600\n");
    const t = await client.ok("files.run", { path: join(dir, "sleep.sh"), timeoutMs: 300, wait: 30_000 });
    expect(t.job.state).toBe("timed_out");
    const c = await client.ok("files.run", { path: join(dir, "sleep.sh") });
    await client.ok("jobs.follow", { job: c.job.id });
    await client.waitFor((f) => f.event === "job.output" && f.job === c.job.id, 30_000, "script output");
    await client.ok("jobs.cancel", { job: c.job.id });
    expect((await client.waitForExit(c.job.id)).status.state).toBe("cancelled");
  });

  it("drives download, extract and run from the CLI", async () => {
    const dir = fresh();
    // Asynchronous on purpose: the HTTP server the daemon downloads from lives in this process.
    const cli = (...args: string[]) =>
      new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = execFile(
          process.execPath,
          [CLI_MAIN, ...args],
          { env: daemon.cliEnv, cwd: dir, encoding: "utf8", timeout: 30_000 },
          (err, stdout, stderr) => resolve({ status: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
        );
        child.stdin?.end();
      });
    const dl = await cli("download", `${server.url}/file.bin`, "--sha256", SHA, "--json");
    expect(dl.status, dl.stderr).toBe(0);
    expect(JSON.parse(dl.stdout)).toMatchObject({ state: "succeeded", result: { path: join(dir, "file.bin") } });
    const summed = await cli("download", `${server.url}/file.bin`, "--dest", "again.bin", "--sha256-sums", `${server.url}/SUMS`, "--json");
    expect(summed.status, summed.stderr).toBe(0);
    expect(JSON.parse(summed.stdout)).toMatchObject({ state: "succeeded", result: { sha256: SHA } });
    execFileSync("tar", ["-cf", join(dir, "t.tar"), "-C", dir, "file.bin"]);
    const ex = await cli("extract", "t.tar", "unpacked");
    expect(ex.status, ex.stderr).toBe(0);
    expect(readFileSync(join(dir, "unpacked", "file.bin")).equals(BODY)).toBe(true);
    writeFileSync(join(dir, "s.py"), "import sys\nprint('args', sys.argv[1:])\nsys.exit(4)\n");
    const run = await cli("run", "s.py", "--", "a", "b");
    expect(run.stdout).toBe("args ['a', 'b']\n");
    expect(run.status).toBe(4);
  });

  describe.skipIf(!hasNix)("with Nix", () => {
    it("applies the prepared environment of the script's workspace", async () => {
      const ws = fresh();
      const reply = await client.ok("prepare", { workspace: ws, packages: ["hello-a"] }, 60_000);
      if (!reply.ready) {
        const { job } = await client.ok("jobs.wait", { job: reply.job.id, timeoutMs: 60_000 }, 70_000);
        expect(job.state).toBe("succeeded");
      }
      mkdirSync(join(ws, "scripts"));
      writeFileSync(join(ws, "scripts", "use.sh"), "hello-a\n");
      const r = await client.ok("files.run", { path: join(ws, "scripts", "use.sh"), wait: 30_000 });
      expect(r.output.data).toBe("hello-a from standin 1\n");
    });
  });
});

/** startServer registers its cleanup with the current test; this file shares one server across tests. */
async function startServerOutsideTest(routes: Parameters<typeof startServer>[0]) {
  const { createServer } = await import("node:http");
  const server = createServer((req, res) => {
    const route = routes[new URL(req.url ?? "/", "http://x").pathname];
    if (route) route(req, res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    hits: {},
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
