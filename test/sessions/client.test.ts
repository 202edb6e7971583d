import { describe, expect, it } from "vitest";
import { connect } from "../../client/index.js";
import { useDaemon } from "../helpers/daemon.js";

describe("client.session(): the TypeScript client's session helper", () => {
  const t = useDaemon();

  it("opens a session whose run() returns each command's result, answers an input wait, and closes", async () => {
    const client = await connect({ url: t.daemon.url, token: t.daemon.token });
    try {
      const session = await client.session({ cwd: "/", inputWaitMs: 300 });
      expect(session.opened.state).toBe("idle");
      await session.run("cd /tmp && export A=1");
      const result = await session.run("echo $A $PWD");
      expect(result).toMatchObject({ exitCode: 0, awaitingInput: false, output: Buffer.from("1 /tmp\n") });
      expect((await session.run("false")).exitCode).toBe(1);
      const asked = await session.run('printf "Name? "; read x; echo "got $x"');
      expect(asked).toMatchObject({ awaitingInput: true, lastLine: "Name?", output: Buffer.from("Name? ") });
      expect(await session.input(asked.job, "bob\n")).toBe(4);
      expect((await asked.job.wait()).state).toBe("succeeded");
      expect((await asked.job.output()).toString()).toBe("Name? got bob\n");
      const attached = await client.session({ id: session.id });
      expect((await attached.status()).cwd).toBe("/tmp");
      expect((await session.close()).state).toBe("exited");
    } finally {
      await client.close();
    }
  });
});
