import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { toolAvailable } from "../helpers/tools.js";
import { git, rejectsWith, tempWorkspace, writeFile } from "./helpers.js";

const SECRET = "sk-live-0123456789-do-not-commit";

/** The paths in a commit's tree. */
function treeOf(cwd: string, ref = "HEAD"): string[] {
  return git(cwd, "ls-tree", "-r", "--name-only", ref).trim().split("\n").filter(Boolean);
}

describe.skipIf(!toolAvailable("git"))(".env secrets and tasks.commit (real git)", () => {
  it("secrets.write writes a 0600 root .env, echoes only names, and git add -A never commits it (no .gitignore entry)", async () => {
    const { ws } = tempWorkspace();
    await ws.addRepo({});
    const t = await ws.createTask({ task: "t1" });
    const written = await ws.writeSecrets({ task: "t1", values: { API_KEY: SECRET, DB_URL: "postgres://u@h/db" } });
    expect(written).toMatchObject({ repo: "default", task: "t1", path: path.join(t.path, ".env"), names: ["API_KEY", "DB_URL"] });
    expect(JSON.stringify(written)).not.toContain(SECRET);
    expect(fs.statSync(written.path).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(written.path, "utf8")).toContain(`API_KEY=${SECRET}\n`);
    expect(fs.existsSync(path.join(t.path, ".gitignore"))).toBe(false);
    expect(fs.readdirSync(path.dirname(t.path)).sort()).toEqual(["repo", "task.json"]); // no temp file left beside it

    writeFile(t.path, "src/app.js", "console.log(1)\n");
    const c = await ws.commit({ task: "t1", message: "add app" });
    expect(c).toMatchObject({ committed: true, files: ["src/app.js"], fileCount: 1, branch: "task-t1" });
    expect(treeOf(t.path)).toEqual(["src/app.js"]);
    expect(git(t.path, "log", "--all", "-p")).not.toContain(SECRET);
  });

  it("commits use the repository's configured identity, else hotline <hotline@localhost>", async () => {
    const { ws, tmp } = tempWorkspace();
    const home = process.env.HOME;
    process.env.HOME = tmp; // no ~/.gitconfig: the fallback applies
    try {
      const repo = await ws.addRepo({});
      const t = await ws.createTask({ task: "t1" });
      writeFile(t.path, "a", "1");
      await ws.commit({ task: "t1", message: "a" });
      expect(git(t.path, "log", "-1", "--format=%an <%ae>|%cn <%ce>").trim()).toBe(
        "hotline <hotline@localhost>|hotline <hotline@localhost>",
      );
      git(repo.path, "config", "user.name", "Ada Agent");
      git(repo.path, "config", "user.email", "ada@example.invalid");
      writeFile(t.path, "b", "2");
      await ws.commit({ task: "t1", message: "b" });
      expect(git(t.path, "log", "-1", "--format=%an <%ae>").trim()).toBe("Ada Agent <ada@example.invalid>");
    } finally {
      process.env.HOME = home;
    }
  });

  it("the explicit reset keeps the root .env out even when the exclude pin is gone; a subdirectory .env IS committed", async () => {
    const { ws } = tempWorkspace();
    const repo = await ws.addRepo({});
    fs.writeFileSync(path.join(repo.path, ".git/info/exclude"), "# emptied by the test\n");
    const t = await ws.createTask({ task: "t1" });
    fs.writeFileSync(path.join(t.path, ".env"), `TOKEN=${SECRET}\n`);
    writeFile(t.path, "service/.env", "PUBLIC_DEFAULTS=1\n");
    writeFile(t.path, ".env.example", "TOKEN=\n");
    expect(git(t.path, "status", "--porcelain", "--untracked-files=all")).toContain("?? .env\n"); // git would stage it
    const c = await ws.commit({ task: "t1", message: "config" });
    expect(c.committed).toBe(true);
    expect(treeOf(t.path).sort()).toEqual([".env.example", "service/.env"]);
    expect(git(t.path, "diff", "--cached", "--name-only")).toBe("");
    expect(fs.readFileSync(path.join(t.path, ".env"), "utf8")).toContain(SECRET); // the file itself is untouched
  });

  it("nothing to commit is a clear result, not an error; a message starting with # is kept", async () => {
    const { ws } = tempWorkspace();
    await ws.addRepo({});
    const t = await ws.createTask({ task: "t1" });
    fs.writeFileSync(path.join(t.path, ".env"), "A=1\n");
    expect(await ws.commit({ task: "t1", message: "nothing" })).toMatchObject({ committed: false, files: [], fileCount: 0 });
    writeFile(t.path, "a", "1");
    await ws.commit({ task: "t1", message: "#42 fix" });
    expect(git(t.path, "log", "-1", "--format=%s").trim()).toBe("#42 fix");
    await rejectsWith(ws.commit({ task: "t1", message: "  " }), "invalid_request");
    await rejectsWith(ws.commit({ task: "nope", message: "x" }), "not_found");
  });

  it("secrets.write refuses a tracked .env, a .gitignore that re-includes it, and a directory .env", async () => {
    const { ws } = tempWorkspace();
    const repo = await ws.addRepo({});
    writeFile(repo.path, ".env", "COMMITTED=1\n");
    git(repo.path, "add", "-f", ".env");
    git(repo.path, "commit", "-q", "-m", "someone committed .env");
    const refused = await rejectsWith(ws.writeSecrets({ repo: "default", values: { A: SECRET } }), "conflict");
    expect(refused.message).toMatch(/tracked/);
    expect(refused.message).not.toContain(SECRET);
    expect(fs.readFileSync(path.join(repo.path, ".env"), "utf8")).toBe("COMMITTED=1\n");

    const t = await ws.createTask({ task: "t1" }); // task branch inherits the tracked .env
    await rejectsWith(ws.writeSecrets({ task: "t1", values: { A: SECRET } }), "conflict");
    fs.writeFileSync(path.join(t.path, ".env"), "COMMITTED=2\n");
    writeFile(t.path, "b.txt", "b");
    expect((await ws.commit({ task: "t1", message: "b" })).files).toEqual(["b.txt"]); // the tracked .env's edit is reset too

    const { ws: ws2 } = tempWorkspace();
    const r2 = await ws2.addRepo({});
    writeFile(r2.path, ".gitignore", "!.env\n");
    await rejectsWith(ws2.writeSecrets({ repo: "default", values: { A: "1" } }), "conflict");
    fs.rmSync(path.join(r2.path, ".gitignore"));
    fs.mkdirSync(path.join(r2.path, ".env"));
    await rejectsWith(ws2.writeSecrets({ repo: "default", values: { A: "1" } }), "conflict");
    fs.rmdirSync(path.join(r2.path, ".env"));
    await ws2.writeSecrets({ repo: "default", values: { A: "1" } });
    expect(fs.readFileSync(path.join(r2.path, ".env"), "utf8")).toMatch(/\nA=1\n$/);
  });

  it("secrets.write validates names and values before touching the disk and needs exactly one target", async () => {
    const { ws } = tempWorkspace();
    const repo = await ws.addRepo({});
    await ws.writeSecrets({ repo: "default", values: { KEEP: "old" } });
    const bad = await rejectsWith(
      ws.writeSecrets({ repo: "default", values: { GOOD: "x", BAD: `${SECRET}\nINJECTED=1` } }),
      "invalid_request",
    );
    expect(bad.path).toBe("/values/BAD");
    expect(bad.message).not.toContain(SECRET);
    expect(fs.readFileSync(path.join(repo.path, ".env"), "utf8")).toContain("KEEP=old");
    await rejectsWith(ws.writeSecrets({ repo: "default", values: { "1BAD": "x" } }), "invalid_request");
    await rejectsWith(ws.writeSecrets({ values: { A: "x" } }), "invalid_request");
    await rejectsWith(ws.writeSecrets({ repo: "default", task: "t", values: { A: "x" } }), "invalid_request");
    // The shell reads back exactly what was written.
    const tricky = { Q: "it's", S: "a b $HOME `id`", E: "" };
    await ws.writeSecrets({ repo: "default", values: tricky });
    const out = git(repo.path, "-c", 'alias.sh=!sh -c \'set -a; . ./.env; printf %s\\\\0 "$Q" "$S" "$E"\'', "sh");
    expect(out.split("\0").slice(0, 3)).toEqual([tricky.Q, tricky.S, tricky.E]);
  });
});
