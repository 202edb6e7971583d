// What can be checked of the desktop image without building it: its shell files, the bash rc, the
// Chromium policy, the terminal defaults, the supervisord service, the daemon's system config, the
// Dockerfile and its package list. The end-to-end install and start is in image/e2e.test.ts.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../daemon/config.js";
import { toolAvailable } from "../test/helpers/tools.js";
import { KNOWN_CHROMIUM_POLICIES, KNOWN_SUPERVISOR_PROGRAM_KEYS, KNOWN_XFCE_TERMINAL_PROPERTIES } from "./known-settings.js";
import { parseDockerfile, parseIni, readListFile } from "./parse.js";

const IMAGE = new URL(".", import.meta.url).pathname;
const ROOT = join(IMAGE, "..");
const ETC = join(IMAGE, "etc");
const read = (path: string): string => readFileSync(path, "utf8");
const scratch = mkdtempSync(join(tmpdir(), "hotline-image-static-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Every shell file under image/ and scripts/: by extension, shebang or shellcheck directive. */
function shellFiles(): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules") walk(path);
        continue;
      }
      const head = read(path).slice(0, 400);
      const isShell =
        /\.(sh|bash)$/.test(entry.name) ||
        /^#!\s*(\/usr\/bin\/env\s+)?(\/bin\/|\/usr\/bin\/)?(ba)?sh\b/.test(head) ||
        /^# shellcheck shell=(sh|bash|dash)/m.test(head);
      if (isShell) found.push(path);
    }
  };
  for (const dir of [IMAGE, join(ROOT, "scripts")]) if (existsSync(dir)) walk(dir);
  return found.sort();
}

const SHELL_FILES = shellFiles();
const rel = (path: string): string => relative(ROOT, path);

describe("shell files", () => {
  it("are found where the image keeps them", () => {
    const names = SHELL_FILES.map(rel);
    for (const expected of [
      "image/install.sh",
      "image/install-nix.sh",
      "image/libexec/start-supervisord",
      "image/libexec/start-xvnc",
      "image/libexec/start-desktop",
      "image/etc/bash.bashrc",
      "image/etc/profile.d/hotline.sh",
      "image/etc/chromium.d/hotline",
    ]) {
      expect(names).toContain(expected);
    }
  });

  describe.skipIf(!toolAvailable("shellcheck"))("shellcheck", () => {
    it.each(SHELL_FILES.map(rel))("%s passes", (file) => {
      const res = spawnSync("shellcheck", ["--external-sources", "--format=gcc", join(ROOT, file)], {
        cwd: dirname(join(ROOT, file)),
        encoding: "utf8",
      });
      expect(res.stdout + res.stderr).toBe("");
      expect(res.status).toBe(0);
    });
  });

  it.each(SHELL_FILES.map(rel))("%s parses (bash -n / sh -n)", (file) => {
    const text = read(join(ROOT, file));
    const bash = /^#!.*bash/.test(text) || /shell=bash/.test(text.slice(0, 400)) || file.endsWith(".bash");
    const res = spawnSync(bash ? "bash" : "sh", ["-n", join(ROOT, file)], { encoding: "utf8" });
    expect(res.stderr).toBe("");
    expect(res.status).toBe(0);
  });

  it("executables carry their exec bit (COPY keeps it)", () => {
    for (const file of ["install.sh", "install-nix.sh", "libexec/start-supervisord", "libexec/start-xvnc", "libexec/start-desktop"]) {
      expect(statSync(join(IMAGE, file)).mode & 0o111, file).not.toBe(0);
    }
  });
});

/** Runs the system rc the way an interactive terminal does, with the profile fragment from the repo. */
function interactiveBash(script: string, home: string): { stdout: string; stderr: string } {
  const rc = join(scratch, "bash.bashrc");
  writeFileSync(rc, read(join(ETC, "bash.bashrc")).replaceAll("/etc/profile.d/hotline.sh", join(ETC, "profile.d/hotline.sh")));
  const res = spawnSync("bash", ["--norc", "--noprofile", "-i", "-c", `source ${rc}\n${script}`], {
    env: { HOME: home, TERM: "xterm-256color", PATH: "/usr/bin:/bin" },
    encoding: "utf8",
  });
  expect(res.status, res.stderr).toBe(0);
  return { stdout: res.stdout, stderr: res.stderr };
}

describe("system bash rc and profile", () => {
  const home = join(scratch, "home");

  it("sets up an interactive shell: AppImage, Nix profiles first, history written per command", () => {
    const { stdout, stderr } = interactiveBash(
      'echo "A=$APPIMAGE_EXTRACT_AND_RUN"; echo "P=$PATH"; echo "C=$PROMPT_COMMAND"; echo "H=$HISTFILE"',
      home,
    );
    expect(stderr).not.toMatch(/command not found|syntax error|No such file/);
    expect(stdout).toContain("A=1\n");
    const path = /P=(.*)/.exec(stdout)![1].split(":");
    expect(path.slice(0, 3)).toEqual([`${home}/.nix-profile/bin`, "/nix/var/nix/profiles/default/bin", "/opt/hotline/bin"]);
    expect(stdout).toMatch(/C=history -a/);
    expect(stdout).toContain(`H=${home}/.bash_history`);
  });

  it("does nothing in a non-interactive shell", () => {
    const rc = join(ETC, "bash.bashrc");
    const res = spawnSync("bash", ["-c", `source ${rc}; echo "\${APPIMAGE_EXTRACT_AND_RUN-unset} \${PROMPT_COMMAND-unset}"`], {
      env: { PATH: "/usr/bin:/bin", HOME: home },
      encoding: "utf8",
    });
    expect(res.stdout.trim()).toBe("unset unset");
  });

  it("profile fragment is POSIX sh, and sourcing it twice adds nothing twice", () => {
    const profile = join(ETC, "profile.d/hotline.sh");
    const res = spawnSync(
      "sh",
      ["-c", `. ${profile}; . ${profile}; echo "$PATH"; echo "$APPIMAGE_EXTRACT_AND_RUN"; command -v hotline_path_prepend || echo clean`],
      {
        env: { PATH: "/usr/bin:/bin", HOME: home },
        encoding: "utf8",
      },
    );
    expect(res.stderr).toBe("");
    const [path, appimage, fn] = res.stdout.trim().split("\n");
    expect(path).toBe(`${home}/.nix-profile/bin:/nix/var/nix/profiles/default/bin:/opt/hotline/bin:/usr/bin:/bin`);
    expect(appimage).toBe("1");
    expect(fn).toBe("clean");
  });

  it("APPIMAGE_EXTRACT_AND_RUN=1 is in /etc/environment, the profile and the image ENV alike", () => {
    expect(read(join(ETC, "environment")).split("\n")).toContain("APPIMAGE_EXTRACT_AND_RUN=1");
    expect(read(join(ETC, "profile.d/hotline.sh"))).toMatch(/^export APPIMAGE_EXTRACT_AND_RUN=1$/m);
    const env = parseDockerfile(read(join(IMAGE, "Dockerfile")))
      .filter((i) => i.keyword === "ENV")
      .map((i) => i.args)
      .join(" ");
    expect(env).toMatch(/\bAPPIMAGE_EXTRACT_AND_RUN=1\b/);
  });
});

describe("Chromium", () => {
  const policyPath = join(ETC, "chromium/policies/managed/hotline.json");
  const policy = JSON.parse(read(policyPath)) as Record<string, unknown>;

  it("managed policy uses only known policy names, with their types and allowed values", () => {
    expect(Object.keys(policy).length).toBeGreaterThan(5);
    for (const [name, value] of Object.entries(policy)) {
      const known = KNOWN_CHROMIUM_POLICIES[name];
      expect(known, `${name} is not in the list of known Chromium policies`).toBeDefined();
      if (known.type === "boolean") expect(typeof value, name).toBe("boolean");
      else {
        expect(Number.isInteger(value), name).toBe(true);
        expect(known.values, name).toContain(value);
      }
    }
  });

  it("turns off sign-in, sync, the default-browser prompt and reporting", () => {
    expect(policy).toMatchObject({
      BrowserSignin: 0,
      SyncDisabled: true,
      DefaultBrowserSettingEnabled: false,
      MetricsReportingEnabled: false,
    });
  });

  it("sets PrivacySandboxPromptEnabled to false whenever it sets a Privacy Sandbox API (Chromium rejects the set otherwise)", () => {
    const apis = ["PrivacySandboxAdTopicsEnabled", "PrivacySandboxSiteEnabledAdsEnabled", "PrivacySandboxAdMeasurementEnabled"];
    if (apis.some((k) => k in policy)) expect(policy.PrivacySandboxPromptEnabled).toBe(false);
  });

  it("flags file keeps secrets in the profile, and adds --no-sandbox only where user namespaces are missing", () => {
    const flags = join(ETC, "chromium.d/hotline");
    const res = spawnSync(
      "sh",
      [
        "-c",
        `CHROMIUM_FLAGS=--keep; . ${flags}; echo "$CHROMIUM_FLAGS"; unshare --user --map-root-user true 2>/dev/null && echo userns || echo no-userns`,
      ],
      { encoding: "utf8" },
    );
    const [value, userns] = res.stdout.trim().split("\n");
    expect(value).toMatch(/^--keep --password-store=basic/);
    expect(value.includes("--no-sandbox")).toBe(userns === "no-userns");
  });
});

describe("xfce4-terminal defaults", () => {
  const xml = read(join(ETC, "xdg/xfce4/xfconf/xfce-perchannel-xml/xfce4-terminal.xml"));

  it("is one well-formed xfconf channel of known properties with their types", () => {
    expect(xml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n/);
    const body = xml
      .replace(/^<\?xml[^>]*\?>/, "")
      .replace(/<!--[\s\S]*?-->/g, "")
      .trim();
    expect(body).toMatch(/^<channel name="xfce4-terminal" version="1.0">[\s\S]*<\/channel>$/);
    const inner = body.replace(/^<channel[^>]*>/, "").replace(/<\/channel>$/, "");
    const props = [...inner.matchAll(/<property name="([^"]+)" type="([^"]+)" value="([^"]*)"\/>/g)];
    // Nothing but property elements and whitespace inside the channel.
    expect(inner.replace(/<property name="[^"]+" type="[^"]+" value="[^"]*"\/>/g, "").trim()).toBe("");
    expect(props.length).toBeGreaterThan(3);
    for (const [, name, type, value] of props) {
      expect(KNOWN_XFCE_TERMINAL_PROPERTIES[name], `unknown xfce4-terminal property ${name}`).toBe(type);
      if (type === "bool") expect(["true", "false"]).toContain(value);
      if (type === "uint") expect(value).toMatch(/^\d+$/);
    }
  });
});

describe("supervisord service", () => {
  const mainConf = join(ETC, "supervisor/supervisord.conf");
  const programs = new Map<string, Record<string, string>>();
  for (const file of readdirSync(join(ETC, "supervisor/conf.d"))) {
    for (const [section, keys] of parseIni(read(join(ETC, "supervisor/conf.d", file)))) {
      if (section.startsWith("program:")) programs.set(section.slice("program:".length), keys);
    }
  }

  it("runs the daemon, restarting it on failure only, with output in the container log", () => {
    const hotline = programs.get("hotline")!;
    expect(hotline).toMatchObject({
      command: "/opt/hotline/bin/hotline daemon",
      directory: "/home/agent",
      autorestart: "unexpected",
      exitcodes: "0",
      stdout_logfile: "/dev/stdout",
      stdout_logfile_maxbytes: "0",
      redirect_stderr: "true",
    });
    expect(hotline.user, "supervisord runs as agent already; user= would need root").toBeUndefined();
  });

  it("starts the daemon first, then the X server, the session and noVNC", () => {
    const order = [...programs.entries()].sort((a, b) => Number(a[1].priority) - Number(b[1].priority)).map(([name]) => name);
    expect(order).toEqual(["hotline", "xvnc", "desktop"]);
  });

  it("uses only option names supervisord knows (it ignores misspelt ones silently)", () => {
    for (const [name, keys] of programs) {
      for (const key of Object.keys(keys)) expect(KNOWN_SUPERVISOR_PROGRAM_KEYS, `[program:${name}] ${key}`).toContain(key);
    }
  });

  it("starts only commands the image provides", () => {
    const packages = readListFile(read(join(IMAGE, "debian-packages.txt")));
    for (const [name, keys] of programs) {
      const exe = keys.command.split(/\s+/)[0];
      if (exe.startsWith("/usr/local/libexec/hotline-image/"))
        expect(existsSync(join(IMAGE, "libexec", exe.split("/").pop()!)), name).toBe(true);
      else if (exe === "/opt/hotline/bin/hotline") expect(read(join(IMAGE, "Dockerfile"))).toContain("install.sh --prefix /opt/hotline");
      else if (exe === "/usr/bin/websockify") expect(packages).toContain("websockify");
      else throw new Error(`[program:${name}] runs ${exe}, which nothing in the image provides`);
    }
  });

  it("keeps its socket, pid file and logs out of the home", () => {
    const sections = new Map(parseIni(read(mainConf)));
    const main = sections.get("supervisord")!;
    expect(main.nodaemon).toBe("true");
    for (const key of ["logfile", "pidfile", "childlogdir"]) expect(main[key], key).not.toMatch(/^\/home/);
    expect(sections.get("unix_http_server")!.file).toMatch(/^\/tmp\//);
    expect(sections.get("include")!.files).toBe("conf.d/*.conf");
  });

  describe.skipIf(!toolAvailable("supervisord"))("parsed by supervisord's own config parser", () => {
    it("accepts the configuration and reads the programs it declares", () => {
      const python = /^#!\s*(\S+)/.exec(read(execFileSync("sh", ["-c", "command -v supervisord"], { encoding: "utf8" }).trim()))![1];
      const script = [
        "import json, sys",
        "from supervisor.options import ServerOptions",
        "o = ServerOptions()",
        "o.configfile = sys.argv[1]",
        "o.process_config(do_usage=False)",
        "out = {p.name: {'command': p.command, 'autorestart': p.autorestart.__name__ if isinstance(p.autorestart, type) else str(p.autorestart), 'exitcodes': p.exitcodes, 'priority': p.priority, 'stopsignal': int(p.stopsignal)} for g in o.process_group_configs for p in g.process_configs}",
        "print(json.dumps(out))",
      ].join("\n");
      const res = spawnSync(python, ["-c", script, mainConf], { encoding: "utf8" });
      expect(res.stderr).toBe("");
      const parsed = JSON.parse(res.stdout) as Record<
        string,
        { command: string; autorestart: string; exitcodes: number[]; stopsignal: number }
      >;
      expect(Object.keys(parsed).sort()).toEqual(["desktop", "hotline", "xvnc"]);
      expect(parsed.hotline).toMatchObject({
        command: "/opt/hotline/bin/hotline daemon",
        autorestart: "RestartWhenExitUnexpected",
        exitcodes: [0],
        stopsignal: 15,
      });
      expect(parsed.xvnc.autorestart).toBe("RestartUnconditionally");
    });
  });
});

describe("daemon system config", () => {
  it("is accepted by the daemon's own loader and sets the image's port, host, workspace and the binary cache in the home", () => {
    const config = loadConfig({}, { HOTLINE_SYSTEM_CONFIG_DIR: join(ETC, "hotline"), HOME: join(scratch, "cfg-home") });
    expect(config).toMatchObject({
      port: 7070,
      host: "0.0.0.0",
      workspaceRoot: "/home/agent/workspace",
      idleExitMinutes: 0,
      allowedOrigins: [],
    });
    // Under the home, so it survives a recreate with the home alone on a volume (prepare restores from it).
    expect(config.environmentCache.push).toMatch(/^file:\/\/\/home\/agent\/\.cache\/hotline\/[^?]+\?compression=zstd$/);
  });

  it("the port it names is the one the Dockerfile exposes", () => {
    const expose = parseDockerfile(read(join(IMAGE, "Dockerfile")))
      .filter((i) => i.keyword === "EXPOSE")
      .flatMap((i) => i.args.split(/\s+/));
    expect(expose).toContain(String(JSON.parse(read(join(ETC, "hotline/config.json"))).port));
  });
});

describe("Nix configuration", () => {
  const conf = read(join(ETC, "nix/nix.conf"));

  it("enables flakes for a single-user store", () => {
    const features = /^experimental-features\s*=\s*(.*)$/m.exec(conf)![1].split(/\s+/);
    expect(features).toEqual(expect.arrayContaining(["nix-command", "flakes"]));
    expect(conf).toMatch(/^build-users-group\s*=\s*$/m);
  });

  describe.skipIf(!toolAvailable("nix"))("read by nix itself", () => {
    it("knows every setting and turns flakes on", () => {
      const res = spawnSync("nix", ["show-config"], {
        env: { ...process.env, NIX_CONF_DIR: join(ETC, "nix"), NIX_USER_CONF_FILES: join(scratch, "no-user-nix.conf"), NIX_CONFIG: "" },
        encoding: "utf8",
      });
      expect(res.stderr).not.toMatch(/unknown setting/);
      expect(res.status, res.stderr).toBe(0);
      expect(/^experimental-features = (.*)$/m.exec(res.stdout)![1]).toMatch(/\bflakes\b/);
      expect(res.stdout).toMatch(/^sandbox = false$/m);
    });
  });
});

describe("Dockerfile", () => {
  const text = read(join(IMAGE, "Dockerfile"));
  const instructions = parseDockerfile(text);
  const stages = instructions.flatMap((ins, i) => (ins.keyword === "FROM" ? [i] : []));
  const finalStage = instructions.slice(stages[stages.length - 1]);

  it("copies only sources that exist in the repository", () => {
    const copies = instructions.filter((i) => i.keyword === "COPY" && !/--from=/.test(i.args));
    expect(copies.length).toBeGreaterThan(3);
    for (const copy of copies) {
      const words = copy.args.split(/\s+/).filter((w) => !w.startsWith("--"));
      for (const source of words.slice(0, -1)) expect(existsSync(join(ROOT, source)), `COPY ${source}`).toBe(true);
    }
  });

  it("never uses sudo, and strips apt, sudo and setuid bits from the final image", () => {
    // Invoked at the start of a command; naming it (the check that it is absent) is fine.
    expect(instructions.some((i) => /(^|&&|;|\|\||\|)\s*sudo\s/.test(i.args))).toBe(false);
    const strip = finalStage.find((i) => i.keyword === "RUN" && /dpkg --purge/.test(i.args));
    expect(strip?.args).toMatch(/\bapt\b/);
    expect(strip?.args).toMatch(/-perm \/6000/);
  });

  it("ends as the agent user, with a volume home, a health check and supervisord as the entrypoint", () => {
    const users = instructions.filter((i) => i.keyword === "USER");
    expect(users[users.length - 1].args).toBe("agent");
    const lastUser = instructions.lastIndexOf(users[users.length - 1]);
    expect(
      instructions.slice(lastUser + 1).every((i) => i.keyword !== "RUN"),
      "no RUN after the last USER",
    ).toBe(true);
    expect(finalStage.some((i) => i.keyword === "USER" && i.args === "agent")).toBe(true);
    expect(finalStage.find((i) => i.keyword === "VOLUME")?.args).toBe("/home/agent");
    // The daemon's unauthenticated readiness endpoint, with the curl the image carries (debian-packages.txt).
    expect(finalStage.find((i) => i.keyword === "HEALTHCHECK")?.args).toMatch(/"curl", "-fsS", .*"http:\/\/127\.0\.0\.1:7070\/readyz"\]$/);
    expect(readListFile(readFileSync(join(IMAGE, "debian-packages.txt"), "utf8"))).toContain("curl");
    expect(JSON.parse(finalStage.find((i) => i.keyword === "ENTRYPOINT")!.args)).toEqual([
      "/usr/local/libexec/hotline-image/start-supervisord",
    ]);
  });

  it("installs the daemon with image/install.sh into the prefix the service starts", () => {
    expect(text).toMatch(/sh image\/install\.sh --prefix \/opt\/hotline/);
    expect(text).toMatch(/COPY --from=daemon \/opt\/hotline \/opt\/hotline/);
  });

  it("keeps the build context lean: node_modules, dist and .git are ignored", () => {
    const ignore = readListFile(read(join(IMAGE, "Dockerfile.dockerignore")));
    expect(ignore).toEqual(expect.arrayContaining(["node_modules", "dist", ".git"]));
  });
});

describe("Debian packages", () => {
  const packages = readListFile(read(join(IMAGE, "debian-packages.txt")));
  const excludes = readListFile(read(join(IMAGE, "appimage-excludelist.txt"))).map((line) => {
    const [lib, pkg, ...why] = line.split(/\s+/);
    return { lib, pkg, why: why.join(" ") };
  });

  it("are plain package names, none of them sudo", () => {
    for (const p of packages) expect(p).toMatch(/^[a-z0-9][a-z0-9+.-]+$/);
    expect(packages).not.toContain("sudo");
    expect(new Set(packages).size).toBe(packages.length);
  });

  it("cover the desktop, its input and capture tools, the browser and the service", () => {
    expect(packages).toEqual(
      expect.arrayContaining([
        "xfce4",
        "xfce4-terminal",
        "chromium",
        "supervisor",
        "tigervnc-standalone-server",
        "xdotool",
        "x11-apps",
        "x11-xserver-utils",
        "imagemagick",
        "git",
        "python3",
      ]),
    );
  });

  it("cover every library on the AppImage exclude list, or say why none applies", () => {
    // The upstream list had 52 distinct uncommented entries when this copy was made.
    expect(excludes.length).toBe(52);
    expect(new Set(excludes.map((e) => e.lib)).size).toBe(excludes.length);
    for (const { lib, pkg, why } of excludes) {
      expect(lib).toMatch(/\.so\.\d+$/);
      if (pkg === "-") expect(why.length, lib).toBeGreaterThan(20);
      else expect(packages, `${lib} needs ${pkg}`).toContain(pkg);
    }
  });

  describe.skipIf(!toolAvailable("dpkg-query", ["--version"]))("checked against dpkg where installed here", () => {
    it("each installed package ships the library the list says it does", () => {
      let checked = 0;
      for (const { lib, pkg } of excludes) {
        if (pkg === "-") continue;
        const files = spawnSync("dpkg-query", ["-L", pkg], { encoding: "utf8" });
        if (files.status !== 0) continue; // not installed on this machine
        expect(
          files.stdout.split("\n").some((f) => f.endsWith(`/${lib}`)),
          `${pkg} ships ${lib}`,
        ).toBe(true);
        checked++;
      }
      // libc6, libgcc-s1, libstdc++6 and zlib1g are on every Debian machine.
      expect(checked).toBeGreaterThanOrEqual(4);
      console.info(`[image] dpkg confirmed ${checked} of ${excludes.filter((e) => e.pkg !== "-").length} exclude-list libraries`);
    });
  });
});
