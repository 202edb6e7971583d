import { describe, expect, it, onTestFinished } from "vitest";
import { spawn as spawnPty } from "node-pty";
import { CLI_MAIN, TestDaemon } from "./helpers/daemon.js";
import { cleanup, STANDIN_REF, tempDir } from "./nix/helpers.js";
import { toolAvailable } from "./helpers/tools.js";

const hasNix = toolAvailable("nix");

/** The lines a terminal would show after `text`: \r returns, ESC[2K clears the line, other escapes are dropped. */
function screen(text: string): string[] {
  const lines: string[] = [];
  let line = "";
  let col = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === "\u001b") {
      const m = /^\u001b\[([0-9;?]*)([A-Za-z])/.exec(text.slice(i));
      if (m) {
        if (m[2] === "K" && m[1] === "2") line = "";
        i += m[0].length - 1;
      }
    } else if (ch === "\r") col = 0;
    else if (ch === "\n") {
      lines.push(line);
      line = "";
      col = 0;
    } else {
      line = line.slice(0, col).padEnd(col) + ch + line.slice(col + 1);
      col++;
    }
  }
  if (line) lines.push(line);
  return lines;
}

describe.skipIf(!hasNix)("hotline prepare on a terminal (real nix, offline stand-in)", () => {
  it("keeps the progress bar off output lines, and says another client cancelled it", async () => {
    const daemon = await TestDaemon.start({ env: { HOTLINE_NIXPKGS: STANDIN_REF } });
    const ws = tempDir("cli-prepare");
    const client = await daemon.client();
    onTestFinished(async () => {
      await client.close();
      await daemon.stop();
      daemon.cleanup();
      cleanup(ws);
    });
    const term = spawnPty(process.execPath, [CLI_MAIN, "prepare", "--workspace", ws, "slow"], { cols: 160, rows: 50, env: daemon.cliEnv });
    onTestFinished(() => term.kill("SIGKILL"));
    let text = "";
    const started = new Promise<void>((resolve) =>
      term.onData((d) => {
        text += d;
        if (text.includes("slow-build-started")) resolve();
      }),
    );
    const exited = new Promise<number>((resolve) => term.onExit(({ exitCode }) => resolve(exitCode)));
    await started;
    const { jobs } = await client.ok("jobs.list", { kind: "prepare" });
    await client.ok("jobs.cancel", { job: jobs[0].id });
    expect(await exited).toBe(130);

    const bar = /\[[#.]{24}\] \d+\/\d+ builds/;
    expect(text).toMatch(bar); // the bar was drawn…
    const lines = screen(text);
    expect(lines).toContain("slow-build-started"); // …yet every output line stands alone
    expect(lines.filter((l) => bar.test(l))).toEqual([]);
    expect(lines.at(-1)).toBe(
      `prepare cancelled by another client: a jobs.cancel of job ${jobs[0].id} (hotline cancel ${jobs[0].id}) from another connection`,
    );
  });
});
