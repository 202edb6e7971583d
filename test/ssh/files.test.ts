import { createHash, randomBytes } from "node:crypto";
import { createReadStream, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { toolAvailable } from "../helpers/tools.js";
import { useDaemon } from "../helpers/daemon.js";
import { SshClients, type SshAccessForTest } from "../helpers/ssh.js";

const haveSsh = toolAvailable("ssh", ["-V"]);

async function sha256(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** A file of random bytes, written in pieces (100 MB in one Buffer would be needless). */
function randomFile(path: string, bytes: number): void {
  writeFileSync(path, "");
  const piece = 4 * 1024 * 1024;
  for (let done = 0; done < bytes; done += piece) writeFileSync(path, randomBytes(Math.min(piece, bytes - done)), { flag: "a" });
}

describe.skipIf(!haveSsh)("SSH: files (scp, sftp) with the real OpenSSH client", () => {
  const ctx = useDaemon();
  const clients = new SshClients();
  afterEach(() => clients.killAll());
  afterAll(() => clients.cleanup());

  const target = (access: SshAccessForTest, path: string): string => `${access.sshUser}@${access.sshHost}:${path}`;
  const scp = (access: SshAccessForTest, args: string[]) =>
    clients.run("scp", [...clients.options(access), "-P", String(access.sshPort), ...args]);

  it.each([
    ["SFTP mode (the default)", []],
    ["the legacy protocol (scp -O)", ["-O"]],
  ])("scp of a 100 MB random file up and back is byte-exact, in %s", async (_name, mode) => {
    const access = await clients.open(ctx.client);
    const local = join(clients.home, `random-${mode.length}.bin`);
    randomFile(local, 100 * 1000 * 1000);
    const remote = join(ctx.daemon.dirs.root, `uploaded-${mode.length}.bin`);
    const back = join(clients.home, `back-${mode.length}.bin`);
    const up = await scp(access, [...mode, local, target(access, remote)]);
    expect(up, up.stderr).toMatchObject({ code: 0 });
    const down = await scp(access, [...mode, target(access, remote), back]);
    expect(down, down.stderr).toMatchObject({ code: 0 });
    const sum = await sha256(local);
    expect(await sha256(remote)).toBe(sum);
    expect(await sha256(back)).toBe(sum);
  });

  it("an sftp -b batch (mkdir, put, ls, rename, rm) does what it says", async () => {
    const access = await clients.open(ctx.client);
    const base = join(ctx.daemon.dirs.root, "sftp-area");
    mkdirSync(base);
    const local = join(clients.home, "note.txt");
    writeFileSync(local, "a note\n");
    const batch = join(clients.home, "batch");
    writeFileSync(
      batch,
      [
        `mkdir ${base}/d`,
        `put ${local} ${base}/d/note.txt`,
        `ls ${base}/d`,
        `rename ${base}/d/note.txt ${base}/d/renamed.txt`,
        `put ${local} ${base}/d/gone.txt`,
        `rm ${base}/d/gone.txt`,
      ].join("\n"),
    );
    const run = await clients.run("sftp", [
      ...clients.options(access),
      "-P",
      String(access.sshPort),
      "-b",
      batch,
      `${access.sshUser}@${access.sshHost}`,
    ]);
    expect(run, run.stderr).toMatchObject({ code: 0 });
    expect(run.stdout).toContain(`${base}/d/note.txt`);
    expect(readFileSync(join(base, "d", "renamed.txt"), "utf8")).toBe("a note\n");
    expect(existsSync(join(base, "d", "note.txt"))).toBe(false);
    expect(existsSync(join(base, "d", "gone.txt"))).toBe(false);
  });
});
