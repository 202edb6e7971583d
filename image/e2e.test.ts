// The image's install path end to end, without Docker: install the built daemon with
// image/install.sh into a temporary prefix (as the Dockerfile does into /opt/hotline), then start
// it as an unprivileged user with a fresh home and the image's system config, directly and under
// the image's supervisord service, and use it through the installed CLI.
//
// Prepare is not run here: it is covered through the daemon by test/prepare.test.ts, and where the
// Nix store belongs to root (as on CI) an unprivileged throwaway user could not build into it.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolAvailable } from "../test/helpers/tools.js";

const IMAGE = new URL(".", import.meta.url).pathname;
const ROOT = join(IMAGE, "..");
const IS_ROOT = process.getuid?.() === 0;

/** The unprivileged account the daemon runs as: a throwaway user when the tests run as root. */
interface Account {
  name: string;
  uid: number;
  gid: number;
  /** The command line that runs `cmd args` as this account. */
  wrap(cmd: string, args: string[]): [string, string[]];
  remove(): Promise<void>;
}

function unprivilegedAccount(home: string): Account {
  if (!IS_ROOT) {
    const me = userInfo();
    return { name: me.username, uid: me.uid, gid: me.gid, wrap: (cmd, args) => [cmd, args], remove: async () => {} };
  }
  const name = `hlimg${process.pid}`.slice(0, 31);
  const add = spawnSync("useradd", ["--system", "--user-group", "--no-create-home", "--home-dir", home, "--shell", "/bin/sh", name], {
    encoding: "utf8",
  });
  if (add.status !== 0) throw new Error(`useradd ${name} failed: ${add.stderr}`);
  const id = (flag: string): number => Number(spawnSync("id", [flag, name], { encoding: "utf8" }).stdout.trim());
  const uid = id("-u");
  const gid = id("-g");
  return {
    name,
    uid,
    gid,
    wrap: (cmd, args) => ["setpriv", [`--reuid=${uid}`, `--regid=${gid}`, "--clear-groups", "--", cmd, ...args]],
    remove: async () => {
      // What the tests started as this user ends with them (supervisord's log `cat` a moment after
      // supervisord); whatever is still there after a grace period is ended by pid, then the user goes.
      const deadline = Date.now() + 5_000;
      while (processesOf(uid).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      for (const pid of processesOf(uid)) process.kill(pid, "SIGKILL");
      const del = spawnSync("userdel", [name], { encoding: "utf8" });
      if (del.status !== 0) console.warn(`[image] userdel ${name} failed: ${del.stderr}`);
    },
  };
}

/** Pids of the processes that run as uid. */
function processesOf(uid: number): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      try {
        return uidOf(pid) === uid;
      } catch {
        return false; // exited meanwhile
      }
    });
}

/** A child process whose stdout and stderr lines are kept, with a way to wait for one. */
class Watched {
  readonly lines: string[] = [];
  readonly exited: Promise<number | null>;
  private waiters: Array<{ match: (line: string) => boolean; resolve: (line: string) => void }> = [];

  constructor(readonly proc: ChildProcess) {
    for (const stream of [proc.stdout!, proc.stderr!]) {
      createInterface({ input: stream }).on("line", (line) => {
        this.lines.push(line);
        for (const w of [...this.waiters]) {
          if (w.match(line)) {
            this.waiters.splice(this.waiters.indexOf(w), 1);
            w.resolve(line);
          }
        }
      });
    }
    this.exited = new Promise((resolve) => proc.once("exit", (code) => resolve(code)));
  }

  /** The first line (already seen or future) that matches; fails with the transcript on timeout or exit. */
  waitFor(match: (line: string) => boolean, what: string, timeoutMs = 30_000): Promise<string> {
    const seen = this.lines.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const fail = (why: string): void => reject(new Error(`${why} waiting for ${what}; output so far:\n${this.lines.join("\n")}`));
      const timer = setTimeout(() => fail(`timed out after ${timeoutMs} ms`), timeoutMs);
      void this.exited.then((code) => fail(`process exited (${code})`));
      this.waiters.push({
        match,
        resolve: (line) => {
          clearTimeout(timer);
          resolve(line);
        },
      });
    });
  }

  stop(signal: NodeJS.Signals = "SIGTERM"): Promise<number | null> {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill(signal);
    return this.exited;
  }
}

/** The daemon's "listening" record (pino JSON) from a log line, or undefined. */
function listening(line: string): { pid: number; url: string } | undefined {
  try {
    const record = JSON.parse(line) as { msg?: string; pid?: number; url?: string };
    return record.msg === "listening" && record.url && record.pid ? { pid: record.pid, url: record.url } : undefined;
  } catch {
    return undefined;
  }
}

function uidOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/^Uid:\s+(\d+)/m.exec(status)![1]);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const built = existsSync(join(ROOT, "dist/cli/main.js")) && existsSync(join(ROOT, "dist/daemon/main.js"));
const canSwitchUser = !IS_ROOT || (toolAvailable("useradd", ["--help"]) && toolAvailable("setpriv", ["--version"]));

describe.skipIf(!canSwitchUser)("the daemon installed as the image installs it, run by an unprivileged user", () => {
  const root = mkdtempSync(join(tmpdir(), "hotline-image-e2e-"));
  const prefix = join(root, "prefix");
  const home = join(root, "home");
  const runDir = join(root, "run");
  const hotline = join(prefix, "bin/hotline");
  let account: Account;
  let env: Record<string, string>;
  const started: Watched[] = [];

  /** Runs a command as the account and collects its output. */
  const runAs = (cmd: string, args: string[], timeoutMs = 30_000): Promise<{ status: number | null; stdout: string; stderr: string }> =>
    new Promise((resolve, reject) => {
      const [c, a] = account.wrap(cmd, args);
      const child = spawn(c, a, { env, cwd: home, stdio: ["ignore", "pipe", "pipe"], timeout: timeoutMs });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.once("error", reject);
      child.once("close", (status) => resolve({ status, stdout, stderr }));
    });

  const startAs = (cmd: string, args: string[], extraEnv: Record<string, string>): Watched => {
    const [c, a] = account.wrap(cmd, args);
    const watched = new Watched(spawn(c, a, { env: { ...env, ...extraEnv }, cwd: home, stdio: ["ignore", "pipe", "pipe"] }));
    started.push(watched);
    return watched;
  };

  // The image's system config, with the two things a test machine needs changed given the way the
  // image's own precedence allows: environment over /etc/hotline.
  const daemonEnv = (): Record<string, string> => ({
    HOTLINE_SYSTEM_CONFIG_DIR: join(IMAGE, "etc/hotline"),
    HOTLINE_PORT: "0",
    HOTLINE_WORKSPACE_ROOT: join(home, "workspace"),
  });

  beforeAll(async () => {
    if (!built) throw new Error("dist/ is missing: run `npm run build` (npm test does) before the image tests");
    chmodSync(root, 0o755);
    for (const dir of [home, runDir]) mkdirSync(dir);
    account = unprivilegedAccount(home);
    for (const dir of [home, runDir]) chownSync(dir, account.uid, account.gid);
    env = { HOME: home, USER: account.name, LOGNAME: account.name, PATH: "/usr/local/bin:/usr/bin:/bin", LANG: "C.UTF-8", TMPDIR: runDir };

    const install = spawnSync("sh", [join(IMAGE, "install.sh"), "--prefix", prefix, "--node", process.execPath], { encoding: "utf8" });
    expect(install.stderr).toBe("");
    expect(install.status).toBe(0);
    const node = await runAs(process.execPath, ["--version"]);
    if (node.status !== 0) throw new Error(`${account.name} cannot run ${process.execPath}: ${node.stderr}`);
  });

  afterAll(async () => {
    for (const w of started) await w.stop("SIGKILL");
    await account?.remove();
    rmSync(root, { recursive: true, force: true });
  });

  it("installs a launcher, the build and only the production dependencies", async () => {
    expect(statSync(hotline).mode & 0o111).not.toBe(0);
    expect(readFileSync(hotline, "utf8")).toContain(
      `exec "${process.execPath}" --max-semi-space-size=1 --v8-pool-size=1 "${prefix}/lib/hotline/dist/cli/main.js" "$@"`,
    );
    const lib = join(prefix, "lib/hotline");
    // nix-templates/: prepare's packages flake, which the daemon finds above dist/.
    const files = [
      "dist/cli/main.js",
      "dist/daemon/main.js",
      "dist/guide/guide.md",
      "dist/build-info.json",
      "nix-templates/packages/flake.nix.in",
      "package.json",
    ];
    for (const file of files) {
      expect(existsSync(join(lib, file)), file).toBe(true);
    }
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    for (const dep of Object.keys(pkg.dependencies)) expect(existsSync(join(lib, "node_modules", dep)), dep).toBe(true);
    for (const dep of Object.keys(pkg.devDependencies))
      expect(existsSync(join(lib, "node_modules", dep)), `dev dependency ${dep}`).toBe(false);
    const help = await runAs(hotline, ["--help"]);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/hotline daemon/);
  });

  it("installs again over itself, atomically, leaving no staging directories", () => {
    const again = spawnSync("sh", [join(IMAGE, "install.sh"), "--prefix", prefix, "--node", process.execPath], { encoding: "utf8" });
    expect(again.status, again.stderr).toBe(0);
    expect(readdirSync(join(prefix, "lib"))).toEqual(["hotline"]);
    expect(readdirSync(join(prefix, "bin"))).toEqual(["hotline"]);
  });

  it("refuses to install from an unbuilt checkout, naming the way out", () => {
    const res = spawnSync("sh", [join(IMAGE, "install.sh"), "--prefix", join(root, "other"), "--source", root], { encoding: "utf8" });
    expect(res.status).not.toBe(0);
    expect(res.stderr).toMatch(/npm ci && npm run build/);
    expect(existsSync(join(root, "other/lib/hotline"))).toBe(false);
  });

  describe("started directly", () => {
    let daemon: Watched;
    let pid: number;

    it("listens with the image's system config, as the unprivileged user, its token private to it", async () => {
      daemon = startAs(hotline, ["daemon"], daemonEnv());
      const record = listening(await daemon.waitFor((l) => listening(l) !== undefined, "the daemon's listening line"))!;
      pid = record.pid;
      const url = new URL(record.url);
      expect(url.hostname).toBe("0.0.0.0"); // from image/etc/hotline/config.json
      expect(url.port).not.toBe("7070"); // HOTLINE_PORT=0 wins over it
      expect(uidOf(pid)).toBe(account.uid);
      if (IS_ROOT) expect(account.uid).not.toBe(0);
      const token = statSync(join(home, ".config/hotline/token"));
      expect(token.mode & 0o777).toBe(0o600);
      expect(token.uid).toBe(account.uid);
      expect(existsSync(join(home, ".local/state/hotline/daemon.json"))).toBe(true);
    });

    it("answers the health check, hotline state info", async () => {
      const res = await runAs(hotline, ["state", "info", "--json"]);
      expect(res.status, res.stderr).toBe(0);
      const info = JSON.parse(res.stdout) as { user: string; pid: number; directories: Record<string, string> };
      expect(info.user).toBe(account.name);
      expect(info.pid).toBe(pid);
      expect(info.directories).toMatchObject({
        state: join(home, ".local/state/hotline"),
        config: join(home, ".config/hotline"),
        cache: join(home, ".cache/hotline"),
      });
    });

    it("runs a shell job as that user and passes its exit status through", async () => {
      const hi = await runAs(hotline, ["shell", "--", "echo", "hi"]);
      expect(hi.status, hi.stderr).toBe(0);
      expect(hi.stdout).toBe("hi\n");
      const uid = await runAs(hotline, ["shell", "--", "id", "-u"]);
      expect(uid.stdout.trim()).toBe(String(account.uid));
      const failing = await runAs(hotline, ["shell", "--", "sh", "-c", "exit 3"]);
      expect(failing.status).toBe(3);
    });

    it("stops cleanly on SIGTERM, after which the health check fails", async () => {
      expect(await daemon.stop("SIGTERM")).toBe(0);
      const res = await runAs(hotline, ["state", "info", "--json"]);
      expect(res.status).not.toBe(0);
    });
  });

  describe.skipIf(!toolAvailable("supervisord"))("under the image's supervisord service", () => {
    it("starts the daemon, restarts it after a crash, and stops it with the service", async () => {
      // The image's files, pointed at this prefix, home and run directory instead of /opt/hotline,
      // /home/agent and /tmp; everything else as the image has it.
      const confDir = join(root, "supervisor");
      mkdirSync(join(confDir, "conf.d"), { recursive: true });
      const main = readFileSync(join(IMAGE, "etc/supervisor/supervisord.conf"), "utf8");
      const program = readFileSync(join(IMAGE, "etc/supervisor/conf.d/hotline.conf"), "utf8");
      expect(main).toContain("/tmp/");
      expect(program).toContain("/opt/hotline/");
      expect(program).toContain("/home/agent");
      writeFileSync(join(confDir, "supervisord.conf"), main.replaceAll("/tmp/", `${runDir}/`));
      writeFileSync(
        join(confDir, "conf.d/hotline.conf"),
        program.replaceAll("/opt/hotline/", `${prefix}/`).replaceAll("/home/agent", home),
      );

      const service = startAs(join(IMAGE, "libexec/start-supervisord"), [join(confDir, "supervisord.conf")], daemonEnv());
      const first = listening(await service.waitFor((l) => listening(l) !== undefined, "the first daemon"))!;
      expect(uidOf(first.pid)).toBe(account.uid);
      expect((await runAs(hotline, ["state", "info", "--json"])).status).toBe(0);

      process.kill(first.pid, "SIGKILL");
      await service.waitFor((l) => /exited: hotline \(terminated by SIGKILL; not expected\)/.test(l), "supervisord to see the crash");
      const second = listening(await service.waitFor((l) => (listening(l)?.pid ?? first.pid) !== first.pid, "the restarted daemon"))!;
      const info = await runAs(hotline, ["state", "info", "--json"]);
      expect(info.status, info.stderr).toBe(0);
      expect((JSON.parse(info.stdout) as { pid: number }).pid).toBe(second.pid);

      expect(await service.stop("SIGTERM")).toBe(0);
      expect(service.lines.some((l) => /stopped: hotline \(exit status 0\)/.test(l))).toBe(true);
      expect(alive(second.pid)).toBe(false);
    });
  });
});
