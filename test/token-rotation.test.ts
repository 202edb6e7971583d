import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { type TestClient, TestDaemon } from "./helpers/daemon.js";

/**
 * The token file is watched: a new token (the file rewritten, or the Kubernetes Secret it is mounted
 * from updated) is in force without a restart, and the old one stops working at once: refused on
 * connect, its connections closed (4001), and so is every token it issued.
 */

const newToken = (): string => `hl_${randomBytes(32).toString("base64url")}`;

/** Replaces a file the way a careful writer does: a temporary sibling renamed over it. */
function writeAtomically(path: string, text: string): void {
  writeFileSync(`${path}.tmp`, text, { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}

/** Polls until `token` opens a connection (the daemon reads the file on its own schedule); the client. */
async function connectWhenAccepted(daemon: TestDaemon, token: string, deadlineMs = 20_000): Promise<TestClient> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    try {
      return await daemon.client({}, token);
    } catch (err) {
      if ((err as { status?: number }).status !== 401 || Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** The close code a client's socket ends with. */
function closed(client: TestClient): Promise<number> {
  return new Promise((resolve) => client.ws.once("close", (code: number) => resolve(code)));
}

async function start(options: Parameters<typeof TestDaemon.start>[0] = {}): Promise<TestDaemon> {
  const daemon = await TestDaemon.start({ ...options, args: ["--ssh", "off", ...(options.args ?? [])] });
  onTestFinished(async () => {
    await daemon.stop();
    daemon.cleanup();
  });
  return daemon;
}

describe("token file rotation without a restart", () => {
  it("a rewritten <config>/token: the old token and every token it issued are refused and their connections closed; the new one works", async () => {
    const daemon = await start();
    const old = await daemon.client();
    const { pid } = (await old.ok("state.info")) as { pid: number };
    const issued = (await old.ok("tokens.create", { scope: "manage", ttlMs: 3_600_000 })) as { token: string; id: string };
    const viaIssued = await daemon.client({}, issued.token);
    const oldClosed = closed(old);
    const issuedClosed = closed(viaIssued);

    const next = newToken();
    writeAtomically(join(daemon.dirs.config, "token"), `${next}\n`);
    const fresh = await connectWhenAccepted(daemon, next);
    onTestFinished(() => fresh.close());

    expect(await oldClosed).toBe(4001);
    expect(await issuedClosed).toBe(4001);
    await expect(daemon.client()).rejects.toMatchObject({ status: 401 });
    await expect(daemon.client({}, issued.token)).rejects.toMatchObject({ status: 401 });
    const info = (await fresh.ok("state.info")) as { pid: number };
    expect(info.pid).toBe(pid); // no restart
    expect(((await fresh.ok("tokens.list")) as { tokens: unknown[] }).tokens).toEqual([]);
    // What the new token issues is listed as the token file's (`primary`), as before.
    const more = (await fresh.ok("tokens.create", { scope: "observe" })) as { id: string };
    const listed = ((await fresh.ok("tokens.list")) as { tokens: Array<{ id: string; issuer?: string }> }).tokens;
    expect(listed.find((t) => t.id === more.id)?.issuer).toBe("primary");
    expect(daemon.logLines.join("\n")).not.toContain(next);
  });

  it("a Secret volume's layout (token → ..data/token, ..data swapped by a rename, as kubelet does): the update is taken", async () => {
    const daemon0 = await TestDaemon.start({ args: ["--ssh", "off"] }); // for its directories only
    await daemon0.stop();
    const secret = join(daemon0.dirs.root, "secret");
    const generation = (n: number, token: string): void => {
      mkdirSync(join(secret, `..gen${n}`), { recursive: true });
      writeFileSync(join(secret, `..gen${n}`, "token"), token, { mode: 0o440 });
      symlinkSync(`..gen${n}`, join(secret, "..data_tmp"));
      renameSync(join(secret, "..data_tmp"), join(secret, "..data"));
    };
    const first = newToken();
    generation(1, first);
    symlinkSync("..data/token", join(secret, "token"));
    const tokenFile = join(secret, "token");
    const daemon = await start({ dirs: daemon0.dirs, env: { HOTLINE_TOKEN_FILE: tokenFile } });
    expect(daemon.token).toBe(first);
    const old = await daemon.client();
    const oldClosed = closed(old);

    const second = newToken();
    generation(2, second);
    const fresh = await connectWhenAccepted(daemon, second);
    onTestFinished(() => fresh.close());
    expect(await oldClosed).toBe(4001);
    await expect(daemon.client({}, first)).rejects.toMatchObject({ status: 401 });
    // The daemon never writes a token file it was given.
    expect(readFileSync(tokenFile, "utf8")).toBe(second);
  });

  it("a token file that is missing at start: nothing is accepted until it holds a token; a short or emptied file keeps the token in force", async () => {
    const daemon0 = await TestDaemon.start({ args: ["--ssh", "off"] });
    await daemon0.stop();
    const tokenFile = join(daemon0.dirs.root, "mounted", "token");
    const daemon = await start({ dirs: daemon0.dirs, env: { HOTLINE_TOKEN_FILE: tokenFile } });
    expect(daemon.token).toBe("");
    const readyz = async (): Promise<number> => (await fetch(`${daemon.url.replace(/^ws/, "http")}/readyz`)).status;
    expect(await readyz()).toBe(503);
    // The default file is not made when another is named.
    await expect(daemon.client({}, readFileSync(join(daemon0.dirs.config, "token"), "utf8").trim())).rejects.toMatchObject({
      status: 401,
    });

    mkdirSync(join(daemon0.dirs.root, "mounted"));
    const token = newToken();
    writeAtomically(tokenFile, token);
    const client = await connectWhenAccepted(daemon, token);
    onTestFinished(() => client.close());
    await client.ok("state.info");
    for (let i = 0; (await readyz()) !== 200; i++) {
      expect(i, "readyz never became 200 after the token arrived").toBeLessThan(200);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

    // Too short to be a token (a file caught half-written), then empty: the token in force stays.
    writeAtomically(tokenFile, "hl_short");
    writeAtomically(tokenFile, "");
    await client.ok("state.info");
    const again = await daemon.client({}, token);
    await again.close();
    // The warning names the file and why, never a token.
    const until = Date.now() + 10_000;
    while (!daemon.logLines.some((l) => l.includes("holds no new token") && l.includes("empty"))) {
      expect(Date.now()).toBeLessThan(until);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(daemon.logLines.join("\n")).not.toContain(token);
  });

  it("a token file replaced while the daemon was down: after the restart the tokens the old one issued are refused", async () => {
    const first = await TestDaemon.start({ args: ["--ssh", "off"] });
    const client = await first.client();
    const issued = (await client.ok("tokens.create", { scope: "manage", ttlMs: 3_600_000 })) as { token: string };
    await client.close();
    await first.stop();
    writeAtomically(join(first.dirs.config, "token"), newToken());
    const second = await start({ dirs: first.dirs });
    await expect(second.client({}, issued.token)).rejects.toMatchObject({ status: 401 });
    const fresh = await second.client();
    expect(((await fresh.ok("tokens.list")) as { tokens: unknown[] }).tokens).toEqual([]);
    await fresh.close();

    // A restart with the same token keeps what it issued.
    const kept = (await (await second.client()).ok("tokens.create", { scope: "observe", ttlMs: 3_600_000 })) as { token: string };
    await second.stop();
    const third = await start({ dirs: first.dirs });
    const viaKept = await third.client({}, kept.token);
    await viaKept.close();
  });
});
