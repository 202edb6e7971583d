import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI_MAIN, useDaemon } from "../helpers/daemon.js";
import { toolAvailable } from "../helpers/tools.js";
import { scratch, sha256 } from "./helpers.js";

describe("hotline cat, put, ls, grep", () => {
  const ctx = useDaemon();
  const cli = (args: string[], input?: Buffer | string) =>
    spawnSync(process.execPath, [CLI_MAIN, ...args], { env: ctx.daemon.cliEnv, input, timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });

  it("put writes stdin atomically in chunks and cat prints it back byte-exact", () => {
    const dir = scratch();
    const body = randomBytes(3 * 1024 * 1024 + 17);
    const put = cli(["put", join(dir, "sub/blob.bin"), "--parents", "--mode", "0600", "--json"], body);
    expect(put.status, put.stderr.toString()).toBe(0);
    expect(JSON.parse(put.stdout.toString())).toMatchObject({ size: body.length, sha256: sha256(body) });
    expect(sha256(readFileSync(join(dir, "sub/blob.bin")))).toBe(sha256(body));
    const cat = cli(["cat", join(dir, "sub/blob.bin")]);
    expect(cat.status).toBe(0);
    expect(sha256(cat.stdout)).toBe(sha256(body));
    const refused = cli(["put", join(dir, "sub/blob.bin"), "--if-match", "absent"], "x");
    expect(refused.status).toBe(1);
    expect(refused.stderr.toString()).toContain("conflict");
    expect(cli(["put", join(dir, "empty")], "").status).toBe(0);
    expect(readFileSync(join(dir, "empty")).length).toBe(0);
  });

  it.skipIf(!toolAvailable("git"))("ls lists entries and grep prints path:line:column:text", () => {
    const dir = scratch();
    writeFileSync(join(dir, "a.txt"), "one\nfind me\n");
    const ls = cli(["ls", dir]);
    expect(ls.stdout.toString()).toContain(join(dir, "a.txt"));
    const grep = cli(["grep", "find", dir]);
    expect(grep.status).toBe(0);
    expect(grep.stdout.toString()).toBe(`${join(dir, "a.txt")}:2:1:find me\n`);
    expect(cli(["grep", "absent-text", dir]).status).toBe(1);
  });
});
