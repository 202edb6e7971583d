import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HotlineClient } from "../../client/index.js";
import { CLI_MAIN, useDaemon } from "../helpers/daemon.js";
import { mcpClient, textOf } from "../mcp/mcp-client.js";
import { decodePng, pythonUsable } from "./helpers.js";

const scratch = mkdtempSync(join(tmpdir(), "hotline-code-surfaces-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const PLOT = "import matplotlib.pyplot as plt\nplt.figure(figsize=(3, 2), dpi=50)\nplt.plot([0, 1, 4], [2, 0, 3])\nNone";
/** A figure far over the inline budget: kept as a file of the run. */
const BIG_PLOT =
  "import numpy as np\nimport matplotlib.pyplot as plt\nplt.figure(figsize=(6, 4), dpi=100)\nplt.imshow(np.random.default_rng(2).random((200, 300, 3)))\nNone";

type Content = { type: string; text?: string; data?: string; mimeType?: string };

describe.skipIf(!pythonUsable())("code contexts on every surface", () => {
  const t = useDaemon();

  describe.each(["http", "stdio"] as const)("MCP over %s", (kind) => {
    let mcp: Client;
    beforeAll(async () => {
      mcp = await mcpClient(t.daemon, kind);
    });
    afterAll(async () => {
      await mcp?.close();
    });

    it("code_run returns the figure as image/png content the client sees, and the value as text", async () => {
      const { tools } = await mcp.listTools();
      expect(tools.find((tool) => tool.name === "code_run")?.description).toMatch(/MIME/);
      const result = await mcp.callTool({ name: "code_run", arguments: { code: `${PLOT.replace(/None$/, "")}print('drawn')\n6 * 7` } });
      expect(result.isError).toBeFalsy();
      const content = result.content as Content[];
      const images = content.filter((c) => c.type === "image");
      expect(images.map((c) => c.mimeType)).toEqual(["image/png"]);
      expect(decodePng(Buffer.from(images[0]!.data!, "base64"))).toEqual({ width: 150, height: 100 });
      const text = textOf(result);
      expect(text).toMatch(/python run ok, context c\w+, generation 1/);
      expect(text).toContain("drawn");
      expect(text).toContain("Out: 42");
      expect(result.structuredContent).toMatchObject({ job: { kind: "code", state: "succeeded" }, result: { status: "ok" } });
    });

    it("sends a figure kept as a file of the run as image content too, and an error as its traceback", async () => {
      const big = await mcp.callTool({ name: "code_run", arguments: { code: BIG_PLOT } });
      const [image] = (big.content as Content[]).filter((c) => c.type === "image");
      expect(decodePng(Buffer.from(image!.data!, "base64"))).toEqual({ width: 600, height: 400 });
      const structured = big.structuredContent as { result: { outputs: Array<{ files?: Record<string, unknown> }> } };
      expect(structured.result.outputs[0]!.files?.["image/png"]).toBeDefined();

      const failed = await mcp.callTool({ name: "code_run", arguments: { code: "def f():\n    return 1 / 0\nf()" } });
      expect(failed.isError).toBeFalsy(); // the tool worked; the code failed, and says how
      expect(textOf(failed)).toMatch(/python run error[\s\S]*line 2, in f[\s\S]*ZeroDivisionError: division by zero/);
    });
  });

  it("client.code.run returns typed results and the run's images, inline or from its files", async () => {
    const client = await HotlineClient.connect({ url: t.daemon.url, token: t.daemon.token });
    try {
      const context = await client.code.createContext("python", { cwd: scratch });
      expect(context).toMatchObject({ language: "python", generation: 1, state: "idle", interpreter: "/usr/bin/python3" });
      await client.code.run("total = 40", { context: context.id });
      const run = await client.code.run("print('sum')\ntotal + 2", { context: context.id });
      expect(run.result?.outputs).toEqual([{ type: "result", data: { "text/plain": "42" } }]);
      expect(run.output?.toString()).toBe("sum\n");
      expect(run.status).toMatchObject({ kind: "code", state: "succeeded" });
      const small = await client.code.run(PLOT, { context: context.id });
      const big = await client.code.run(BIG_PLOT, { context: context.id });
      const images = [...(await client.code.images(small)), ...(await client.code.images(big))];
      expect(images.map((i) => [i.mime, i.width, i.height])).toEqual([
        ["image/png", 150, 100],
        ["image/png", 600, 400],
      ]);
      for (const image of images) expect(decodePng(image.data)).toEqual({ width: image.width, height: image.height });
      const early = await client.code.run("import time\ntime.sleep(0.3)\n'done'", { context: context.id, wait: 0 });
      expect(early.result).toBeUndefined();
      expect((await early.job.wait()).result).toMatchObject({ outputs: [{ data: { "text/plain": "'done'" } }] });
      const { lost } = await client.code.restartContext(context.id);
      expect(lost).toContain("total");
      await client.code.removeContext(context.id);
      expect((await client.code.listContexts()).map((c) => c.id)).not.toContain(context.id);
    } finally {
      await client.close();
    }
  });

  it("hotline code run FILE|- prints values, streams output, writes figures to files, and exits with the run's status", () => {
    const cli = (args: string[], input?: string) =>
      spawnSync(process.execPath, [CLI_MAIN, "code", ...args], { env: t.daemon.cliEnv, input, encoding: "utf8", cwd: scratch });
    const figures = join(scratch, "figures", "new"); // not there yet: the CLI makes it
    const plotted = cli(["run", "-o", figures, "-"], `print('plotting')\n${PLOT.replace(/None$/, "")}\nlen('four')`);
    expect(plotted.status, plotted.stderr).toBe(0);
    expect(plotted.stdout).toBe("plotting\n4\n");
    const [file] = readdirSync(figures);
    expect(file).toMatch(/^j\w+-1\.png$/);
    expect(plotted.stderr).toContain(`figure: ${join(figures, file!)} (150x100)`);
    expect(decodePng(readFileSync(join(figures, file!)))).toEqual({ width: 150, height: 100 });

    const script = join(scratch, "script.js");
    writeFileSync(script, "const n = await Promise.resolve(20);\nn + 1\n");
    const js = cli(["run", "-l", "javascript", script]);
    expect(js.status, js.stderr).toBe(0);
    expect(js.stdout).toBe("21\n");

    const failed = cli(["run", "-"], "raise KeyError('nope')");
    expect(failed.status).toBe(1);
    expect(failed.stderr).toMatch(/KeyError: 'nope'/);
    const timedOut = cli(["run", "--timeout", "1s", "-"], "while True:\n    pass");
    expect(timedOut.status).toBe(124);

    const listed = cli(["list", "--json"]);
    const contexts = JSON.parse(listed.stdout).contexts as Array<{ id: string; language: string; default?: boolean }>;
    expect(
      contexts
        .filter((c) => c.default)
        .map((c) => c.language)
        .sort(),
    ).toEqual(["javascript", "python"]);
    expect(cli(["run"]).status).toBe(2);
  });
});
