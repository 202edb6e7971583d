import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TokenStore } from "../tokens/store.js";
import { SshAccess } from "./access.js";
import { loadHostKey } from "./host-key.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
async function access(): Promise<{ access: SshAccess; dir: string; issuer: string }> {
  const dir = mkdtempSync(join(tmpdir(), "hotline-ssh-access-"));
  dirs.push(dir);
  const tokens = new TokenStore(dir);
  const { id } = await tokens.create({ scope: "manage", ttlMs: 600_000 });
  return { access: new SshAccess(tokens, undefined), dir, issuer: id };
}

// The daemon listens for WebSockets before its SSH server (loaded on first use) is up; a client
// that asks at once (CI on a busy machine did) must get a credential, not "not started yet".
describe("SshAccess while the SSH server starts", () => {
  it("an issue asked before the server listens waits for it and answers with a working address", async () => {
    const { access: ssh, dir, issuer } = await access();
    expect(ssh.status()).toMatchObject({ available: false, reason: "the SSH server has not started yet" });
    let answered = false;
    const reply = ssh.issue(issuer, undefined).finally(() => (answered = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(answered).toBe(false);
    ssh.listening({ host: "127.0.0.1", port: 2222 }, loadHostKey(dir));
    expect(await reply).toMatchObject({
      available: true,
      sshHost: "127.0.0.1",
      sshPort: 2222,
      sshCommand: expect.stringMatching(/^ssh -p 2222 /),
    });
  });

  it("an issue asked before the server fails to start answers with the failure's reason", async () => {
    const { access: ssh, issuer } = await access();
    const reply = ssh.issue(issuer, undefined);
    ssh.unavailable("the SSH server could not start on 127.0.0.1:2222: address in use");
    expect(await reply).toEqual({ available: false, reason: "the SSH server could not start on 127.0.0.1:2222: address in use" });
  });
});
