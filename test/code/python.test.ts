import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Frame } from "../helpers/daemon.js";
import { useDaemon } from "../helpers/daemon.js";
import { decodePng, gone, outputOf, pythonUsable, run, runFile, running, resultText, WAIT } from "./helpers.js";

const scratch = mkdtempSync(join(tmpdir(), "hotline-code-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// A python3 first on the daemon's PATH that cannot run a context (as pyenv's shim without
// matplotlib stands first on these machines), and an MPLBACKEND a driver must not inherit.
const fakeBin = join(scratch, "bin");
mkdirSync(fakeBin);
writeFileSync(join(fakeBin, "python3"), "#!/bin/sh\necho 'not the python a context runs' >&2\nexit 3\n");
chmodSync(join(fakeBin, "python3"), 0o755);

describe.skipIf(!pythonUsable())("Python code contexts over the real daemon", () => {
  const t = useDaemon({ env: { PATH: `${fakeBin}:${process.env.PATH}`, MPLBACKEND: "module://no_such_backend" } });

  it("keeps state from run to run: x = 41, then x + 1 is 42, in the default context of Debian's python3", async () => {
    const first = await run(t.client, "x = 41");
    expect(first.job).toMatchObject({ kind: "code", state: "succeeded" });
    expect(first.result).toMatchObject({ status: "ok", outputs: [], executionCount: 1, language: "python", generation: 1 });
    const second = await run(t.client, "print('adding')\nx + 1");
    expect(second.result.outputs).toEqual([{ type: "result", data: { "text/plain": "42" } }]);
    expect(second.result).toMatchObject({ status: "ok", executionCount: 2, context: first.result.context, generation: 1 });
    expect(second.output).toMatchObject({ data: "adding\n", bytes: 7 });
    const { contexts } = await t.client.ok("code.context.list");
    const context = contexts.find((c: Frame) => c.id === first.result.context);
    expect(context).toMatchObject({ default: true, language: "python", interpreter: "/usr/bin/python3", state: "idle", names: ["x"] });
    expect(context.memoryBytes).toBeGreaterThan(0);
  });

  it("gives the result as the job's result in jobs.status when wait did not see the end", async () => {
    const started = await t.client.ok("code.run", { code: "import time\ntime.sleep(0.2)\n'late'" });
    expect(started.result).toBeUndefined();
    const { job } = await t.client.ok("jobs.wait", { job: started.job.id, timeoutMs: WAIT }, WAIT + 5000);
    expect(job).toMatchObject({
      state: "succeeded",
      result: { status: "ok", outputs: [{ type: "result", data: { "text/plain": "'late'" } }] },
    });
    expect((await t.client.ok("jobs.status", { job: started.job.id })).result).toEqual(job.result);
  });

  it("returns a matplotlib figure as a PNG of the figure's pixel size (no inherited MPLBACKEND)", async () => {
    const reply = await run(
      t.client,
      "import os\nimport matplotlib.pyplot as plt\nbackend_seen = os.environ.get('MPLBACKEND')\nfig = plt.figure(figsize=(4, 3), dpi=50)\nplt.plot([1, 3, 2])\nplt.title('line')\nNone",
    );
    expect(reply.result.status, JSON.stringify(reply.result.error)).toBe("ok");
    const figures = reply.result.outputs.filter((o: Frame) => o.data["image/png"]);
    expect(figures).toHaveLength(1);
    expect(figures[0]).toMatchObject({ type: "display", metadata: { "image/png": { width: 200, height: 150 } } });
    expect(decodePng(Buffer.from(figures[0].data["image/png"], "base64"))).toEqual({ width: 200, height: 150 });
    expect(resultText(await run(t.client, "backend_seen is None"))).toBe("True");
  });

  it("shows a pandas DataFrame as HTML with its cells and as plain text", async () => {
    const reply = await run(t.client, "import pandas as pd\npd.DataFrame({'city': ['Oslo', 'Lima'], 'temp': [3.5, 19.25]})");
    const [value] = reply.result.outputs;
    expect(value.type).toBe("result");
    expect(value.data["text/html"]).toMatch(/<table/);
    for (const cell of ["<td>Oslo</td>", "<td>Lima</td>", "<td>19.25</td>", "<th>city</th>"])
      expect(value.data["text/html"]).toContain(cell);
    expect(value.data["text/plain"]).toMatch(/Oslo\s+3\.50/);
  });

  it("reports an exception with its name, value and a traceback naming the user's line; the variables stay", async () => {
    const reply = await run(t.client, "def f():\n    raise ValueError('boom')\n\nf()");
    expect(reply.job.state).toBe("succeeded"); // the run ran to its end; its status says how the code went
    expect(reply.result).toMatchObject({ status: "error", error: { name: "ValueError", value: "boom" } });
    const traceback: string[] = reply.result.error.traceback;
    expect(traceback.join("\n")).toMatch(/File "<cell \d+>", line 2, in f\n\s+raise ValueError\('boom'\)/);
    expect(traceback.join("\n")).not.toMatch(/hotline|driver/);
    expect(resultText(await run(t.client, "x"))).toBe("41");
  });

  it("times out a busy loop with timeoutMs: timed_out, the same interpreter alive, x still 41", async () => {
    const before = await run(t.client, "1");
    const reply = await run(t.client, "while True:\n    pass", { timeoutMs: 1000 });
    expect(reply.job.state).toBe("timed_out");
    expect(reply.result).toMatchObject({ status: "timed_out", generation: before.result.generation, error: { name: "KeyboardInterrupt" } });
    expect(reply.result.contextRestarted).toBeUndefined();
    const after = await run(t.client, "x");
    expect(resultText(after)).toBe("41");
    expect(after.result.generation).toBe(before.result.generation);
  });

  it("kills and restarts an interpreter that ignores SIGINT (C-level wait): contextRestarted, what was lost, a new generation; its processes die too", async () => {
    const { context } = await t.client.ok("code.context.create", { language: "python", cwd: scratch });
    const c = context.id;
    const started = await run(t.client, "keep = 'me'\nimport subprocess\nchild = subprocess.Popen(['sleep', '600'])\nchild.pid", {
      context: c,
    });
    const child = Number(resultText(started));
    expect(running(child)).toBe(true);
    const hang = await run(
      t.client,
      "import os, signal\nsignal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})\nr, w = os.pipe()\nprint('blocking', flush=True)\nos.read(r, 1)",
      { context: c, timeoutMs: 1000 },
    );
    expect(hang.job.state).toBe("timed_out");
    expect(hang.result).toMatchObject({ status: "timed_out", contextRestarted: true, generation: 2, context: c });
    expect(hang.result.lost).toEqual(expect.arrayContaining(["keep", "child", "subprocess"]));
    expect(hang.result.restartReason).toMatch(/killed/);
    expect(hang.output.data).toBe("blocking\n");
    await gone([child]);
    const next = await run(t.client, "'keep' in globals(), 6 * 7", { context: c });
    expect(next.result).toMatchObject({ status: "ok", generation: 2, executionCount: 1 });
    expect(next.result.contextRestarted).toBeUndefined(); // said once, on the run that caused it
    expect(resultText(next)).toBe("(False, 42)");
    const status = (await t.client.ok("code.context.list")).contexts.find((s: Frame) => s.id === c);
    expect(status).toMatchObject({ generation: 2, state: "idle" });
    // One interpreter per context: the killed one's job ended, saying what replaced it.
    const hosts = (await t.client.ok("jobs.list", { kind: "code-context", limit: 100 })).jobs.filter((j: Frame) => j.context === c);
    expect(hosts.map((j: Frame) => [j.title, j.state])).toEqual([
      [`python context ${c} (generation 2)`, "running"],
      [`python context ${c} (generation 1)`, "failed"],
    ]);
    expect(hosts[0].id).toBe(status.hostJob);
  });

  it("ends a run cancelled by jobs.cancel as interrupted, and the context keeps its state", async () => {
    await run(t.client, "x = 41");
    const started = await t.client.ok("code.run", { code: "import time\nprint('sleeping', flush=True)\ntime.sleep(600)" });
    await t.client.ok("jobs.follow", { job: started.job.id });
    await t.client.waitFor((f) => f.event === "job.output" && f.job === started.job.id, WAIT, "the run's first output");
    // One run at a time: another is refused at once, naming the running one (it never waits behind it).
    const second = (await t.client.call("code.run", { code: "1" })).error;
    expect(second).toMatchObject({ code: "conflict", details: { job: started.job.id } });
    await t.client.ok("jobs.cancel", { job: started.job.id, signal: "SIGINT" });
    const { job } = await t.client.ok("jobs.wait", { job: started.job.id, timeoutMs: WAIT }, WAIT + 5000);
    expect(job).toMatchObject({ state: "cancelled", result: { status: "interrupted", error: { name: "KeyboardInterrupt" } } });
    expect(job.result.contextRestarted).toBeUndefined();
    expect(resultText(await run(t.client, "x"))).toBe("41");
  });

  it("streams 20 MB of print output as job.output and persists it byte-exact", async () => {
    const line = `${"0123456789abcdef".repeat(63)}xyz\n`; // 1012 bytes
    const lines = 20_800;
    const expected = createHash("sha256").update(line.repeat(lines)).digest("hex");
    const started = await t.client.ok("code.run", {
      code: `import sys\nline = ${JSON.stringify(line)}\nfor _ in range(${lines}):\n    sys.stdout.write(line)`,
    });
    const job = started.job.id;
    await t.client.ok("jobs.follow", { job, from: 0 });
    const exit = await t.client.waitForExit(job, 120_000);
    expect(exit.status.state).toBe("succeeded");
    const streamed = t.client.outputOf(job, "stdout");
    expect(streamed.length).toBe(line.length * lines);
    expect(createHash("sha256").update(streamed).digest("hex")).toBe(expected);
    const persisted = await outputOf(t.client, job);
    expect(createHash("sha256").update(persisted).digest("hex")).toBe(expected);
    expect((await t.client.ok("jobs.status", { job })).result).toMatchObject({ status: "ok", outputs: [] });
  });

  it("keeps two contexts' names apart", async () => {
    const a = (await t.client.ok("code.context.create", { language: "python" })).context.id;
    const b = (await t.client.ok("code.context.create", { language: "python" })).context.id;
    await run(t.client, "secret = 'a'", { context: a });
    const seen = await run(t.client, "'secret' in globals(), 'x' in globals()", { context: b });
    expect(resultText(seen)).toBe("(False, False)");
    expect((await run(t.client, "secret", { context: b })).result.error).toMatchObject({ name: "NameError" });
    expect(resultText(await run(t.client, "secret", { context: a }))).toBe("'a'");
    await t.client.ok("code.context.remove", { context: a });
    await t.client.ok("code.context.remove", { context: b });
  });

  it("stops an idle interpreter to free its memory, and the next run says its state is gone", async () => {
    const { context } = await t.client.ok("code.context.create", { language: "python", idleTimeoutMs: 300 });
    await run(t.client, "q = 5", { context: context.id });
    const pid = (await t.client.ok("code.context.list")).contexts.find((s: Frame) => s.id === context.id).pid;
    let status: Frame;
    do {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await t.client.ok("code.context.list")).contexts.find((s: Frame) => s.id === context.id);
    } while (status.state !== "stopped");
    expect(status.stopped.reason).toMatch(/^idle for 300 ms/);
    expect(status.pid).toBeUndefined();
    await gone([pid]);
    const next = await run(t.client, "q", { context: context.id });
    expect(next.result).toMatchObject({ status: "error", contextRestarted: true, lost: ["q"], error: { name: "NameError" } });
    expect(next.result.restartReason).toMatch(/without a run, to free its memory/);
    expect(next.result.generation).toBe(status.generation + 1);
    await t.client.ok("code.context.remove", { context: context.id });
  });

  it("keeps a large image as a file of the run, read with code.file; restart and remove say what they end", async () => {
    const { context } = await t.client.ok("code.context.create", { language: "python", cwd: scratch });
    const c = context.id;
    const reply = await run(
      t.client,
      "import numpy as np\nimport matplotlib.pyplot as plt\nfig = plt.figure(figsize=(8, 6), dpi=100)\nplt.imshow(np.random.default_rng(1).random((300, 400, 3)))\nplt.show()\nkept = 1",
      { context: c },
    );
    const [figure] = reply.result.outputs;
    expect(figure.data["image/png"]).toBeUndefined();
    expect(figure.data["text/plain"]).toMatch(/Figure/);
    const file = figure.files["image/png"];
    expect(file.bytes).toBeGreaterThan(64 * 1024);
    const png = await runFile(t.client, reply.job.id, file.file);
    expect(png.length).toBe(file.bytes);
    expect(decodePng(png)).toEqual({ width: 800, height: 600 });
    expect((await t.client.call("code.file", { job: reply.job.id, file: "../job.json" })).error).toMatchObject({
      code: "invalid_request",
      path: "/file",
    });
    expect((await t.client.call("code.file", { job: reply.job.id, file: "nope.png" })).error).toMatchObject({ code: "not_found" });

    const restarted = await t.client.ok("code.context.restart", { context: c });
    expect(restarted.lost).toEqual(expect.arrayContaining(["kept", "np", "plt", "fig"]));
    expect(restarted.context).toMatchObject({ generation: 2, state: "idle", executionCount: 0 });
    expect((await run(t.client, "kept", { context: c })).result).toMatchObject({ error: { name: "NameError" }, generation: 2 });

    const sleeper = Number(resultText(await run(t.client, "import subprocess\nsubprocess.Popen(['sleep', '600']).pid", { context: c })));
    expect(running(sleeper)).toBe(true);
    expect(await t.client.ok("code.context.remove", { context: c })).toEqual({ removed: c });
    await gone([sleeper]);
    expect((await t.client.call("code.run", { context: c, code: "1" })).error).toMatchObject({ code: "not_found", path: "/context" });
  });

  it("refuses bad requests with a clear error and no context", async () => {
    expect((await t.client.call("code.context.create", { language: "ruby" })).error).toMatchObject({
      code: "invalid_request",
      path: "/language",
    });
    expect((await t.client.call("code.context.create", { language: "python", cwd: join(scratch, "nope") })).error).toMatchObject({
      code: "invalid_request",
      path: "/cwd",
    });
    const notExecutable = join(scratch, "not-executable");
    writeFileSync(notExecutable, "", { mode: 0o644 });
    expect((await t.client.call("code.context.create", { language: "python", interpreter: notExecutable })).error).toMatchObject({
      code: "invalid_request",
      path: "/interpreter",
    });
    const broken = (await t.client.call("code.context.create", { language: "python", interpreter: join(fakeBin, "python3") })).error;
    expect(broken).toMatchObject({ code: "unavailable" });
    expect(broken.message).toContain("not the python a context runs");
    const { contexts } = await t.client.ok("code.context.list");
    const python = contexts.find((c: Frame) => c.default && c.language === "python");
    expect((await t.client.call("code.run", { context: python.id, language: "javascript", code: "1" })).error).toMatchObject({
      code: "invalid_request",
      path: "/language",
    });
  });
});
