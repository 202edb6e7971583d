import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { describe, expect, it, onTestFinished } from "vitest";
import { parseGitProgress, runGit, GitFailure } from "../../daemon/runners/git.js";
import { toolAvailable } from "../helpers/tools.js";
import { rejectsWith, tempWorkspace } from "./helpers.js";

describe("git progress lines", () => {
  it("parses clone/bundle progress into updates and ignores other lines", () => {
    expect(parseGitProgress("Receiving objects:  45% (450/1000), 1.2 MiB | 3 MiB/s")).toEqual({
      phase: "receiving objects",
      done: 450,
      total: 1000,
      unit: "objects",
    });
    expect(parseGitProgress("remote: Counting objects: 100% (7/7), done.")).toEqual({
      phase: "counting objects",
      done: 7,
      total: 7,
      unit: "objects",
    });
    expect(parseGitProgress("Cloning into 'x'...")).toBeUndefined();
  });
});

describe.skipIf(!toolAvailable("git"))("the git runner (real git)", () => {
  it("gives git a sanitized environment: no daemon secrets, no GIT_DIR, no prompts", async () => {
    const saved = { ...process.env };
    process.env.HOTLINE_TEST_TOKEN = "tok-should-not-leak";
    process.env.GIT_DIR = "/nonexistent/hijack";
    process.env.GITHUB_TOKEN = "ghp_should_not_leak";
    try {
      const r = await runGit(["-c", "alias.showenv=!env", "showenv"], { cwd: process.cwd() });
      expect(r.stdout).not.toContain("should-not-leak");
      expect(r.stdout).not.toContain("ghp_should_not_leak");
      expect(r.stdout).not.toContain("/nonexistent/hijack");
      expect(r.stdout).toMatch(/^GIT_TERMINAL_PROMPT=0$/m);
      expect(r.stdout).toMatch(/^GIT_ALLOW_PROTOCOL=file:git:http:https:ssh$/m);
    } finally {
      process.env = saved;
    }
  });

  it("throws GitFailure with git's message on a non-zero exit, or returns it with allowFailure", async () => {
    const { tmp } = tempWorkspace();
    await expect(runGit(["rev-parse", "HEAD"], { cwd: tmp })).rejects.toBeInstanceOf(GitFailure);
    const r = await runGit(["rev-parse", "HEAD"], { cwd: tmp, allowFailure: true });
    expect(r.exitCode).toBe(128);
    expect(r.stderr).toMatch(/not a git repository/);
  });

  it("a cancelled clone (remote never answers) stops git, removes the partial clone and frees the lock", async () => {
    const { ws, root } = tempWorkspace();
    let onRequest!: () => void;
    const requested = new Promise<void>((resolve) => (onRequest = resolve));
    const server = http.createServer(() => onRequest()); // accepts, never answers
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    onTestFinished(() => {
      server.closeAllConnections();
      server.close();
    });
    const port = (server.address() as AddressInfo).port;
    const ac = new AbortController();
    const progress: string[] = [];
    const adding = ws.addRepo(
      { repo: "slow", url: `http://127.0.0.1:${port}/r.git` },
      { signal: ac.signal, progress: (p) => progress.push(String(p.phase)) },
    );
    await requested;
    ac.abort(new Error("cancelled by the test"));
    await expect(adding).rejects.toThrow("cancelled by the test");
    expect(progress).toContain("cloning");
    const left = execFileSync("ps", ["-eo", "stat=,args="], { encoding: "utf8" })
      .split("\n")
      .filter((l) => l.includes(`127.0.0.1:${port}/`) && !l.trim().startsWith("Z"));
    expect(left).toEqual([]); // git and its remote helper were stopped with the group
    expect(fs.readdirSync(path.join(root, "project/repos/slow")).filter((n) => n !== ".lock")).toEqual([]);
    expect(fs.existsSync(path.join(root, "project/repos/slow/.lock"))).toBe(false);
    const again = await ws.addRepo({ repo: "slow" }); // the lock is free and nothing is left in the way
    expect(again.source).toBe("init");
    await rejectsWith(ws.addRepo({ repo: "slow" }), "conflict");
  });
});
