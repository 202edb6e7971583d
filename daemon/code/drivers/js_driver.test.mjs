// Tests of js_driver.mjs: the real driver as a child process, driven through real pipes on fds 3/4.
// Run: node --test daemon/code/drivers/js_driver.test.mjs
// HOTLINE_DRIVER_DIR: the drivers' directory to test (default: this file's, e.g. dist/daemon/code/drivers).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, beforeEach, describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const DRIVER = join(process.env.HOTLINE_DRIVER_DIR || dirname(fileURLToPath(import.meta.url)), "js_driver.mjs");
/** A bound on waiting, so a broken driver fails the test instead of hanging it (not a timing assertion). */
const PATIENCE_MS = 60_000;

/** One driver process: requests on its fd 3, messages from its fd 4; its stdout/stderr go to files read after "done". */
class Driver {
  constructor() {
    this.dir = mkdtempSync(join(tmpdir(), "hotline-js-driver-"));
    this.filesDir = join(this.dir, "files");
    this.stdoutPath = join(this.dir, "stdout");
    this.stderrPath = join(this.dir, "stderr");
    this.child = spawn(process.execPath, [DRIVER], {
      stdio: ["pipe", openSync(this.stdoutPath, "w"), openSync(this.stderrPath, "w"), "pipe", "pipe"],
      detached: true, // its own process group, as the daemon starts it
    });
    this.exited = new Promise((resolve) => this.child.once("exit", (code, signal) => resolve({ code, signal })));
    this.lines = createInterface({ input: this.child.stdio[4] })[Symbol.asyncIterator]();
    this.runs = 0;
  }

  get pid() {
    return this.child.pid;
  }

  async next() {
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no message from the driver; stderr: ${this.stderr()}`)), PATIENCE_MS);
    });
    try {
      const { value, done } = await Promise.race([this.lines.next(), timeout]);
      if (done) throw new Error(`the driver closed fd 4; stderr: ${this.stderr()}`);
      return JSON.parse(value);
    } finally {
      clearTimeout(timer);
    }
  }

  send(code, fields = {}) {
    this.runs += 1;
    const id = fields.id ?? `run${this.runs}`;
    const request = { type: "run", id, code, filesDir: this.filesDir, maxInlineBytes: 1 << 20, maxLineBytes: 8 << 20, ...fields };
    this.child.stdio[3].write(`${JSON.stringify(request)}\n`);
    return id;
  }

  /** {displays, done} of a run; stdout/stderr files then hold every byte written before "done". */
  async finish(id) {
    const displays = [];
    for (;;) {
      const message = await this.next();
      assert.equal(message.id, id, JSON.stringify(message));
      if (message.type === "done") return { displays, done: message };
      displays.push(message);
    }
  }

  run(code, fields) {
    return this.finish(this.send(code, fields));
  }

  async resultText(code) {
    const { done } = await this.run(code);
    assert.equal(done.status, "ok", JSON.stringify(done));
    return done.result.data["text/plain"];
  }

  stdout() {
    return readFileSync(this.stdoutPath, "utf8");
  }

  stderr() {
    return readFileSync(this.stderrPath, "utf8");
  }

  async waitForStdout(needle) {
    const deadline = Date.now() + PATIENCE_MS;
    while (!this.stdout().includes(needle)) {
      if (Date.now() > deadline) throw new Error(`the driver never wrote ${needle}; stdout: ${this.stdout()}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  async close() {
    this.child.stdio[3].end();
    const timer = setTimeout(() => process.kill(-this.pid, "SIGKILL"), PATIENCE_MS);
    await this.exited;
    clearTimeout(timer);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Whether a process is asleep with no SIGINT pending: it took the signal and went back to waiting. */
function tookSigint(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const pending = [...status.matchAll(/^(?:SigPnd|ShdPnd):\s*([0-9a-f]+)/gm)].reduce((mask, m) => mask | BigInt(`0x${m[1]}`), 0n);
  return (pending & 2n) === 0n && /^State:\s*S/m.test(status);
}

describe("js_driver", () => {
  let driver;
  beforeEach(async () => {
    driver = new Driver();
    driver.ready = await driver.next();
  });
  afterEach(() => driver.close());

  it("says it is ready, with its interpreter", () => {
    assert.equal(driver.ready.type, "ready");
    assert.equal(driver.ready.protocol, 1);
    assert.equal(driver.ready.language, "javascript");
    assert.equal(driver.ready.pid, driver.pid);
    assert.equal(driver.ready.executable, process.execPath);
    assert.equal(driver.ready.version, process.versions.node);
  });

  it("keeps `let a = 1` for the next run's `a + 1`", async () => {
    const first = await driver.run("let a = 1");
    assert.equal(first.done.status, "ok");
    assert.equal(first.done.result, undefined);
    assert.deepEqual(first.done.names, ["a"]);
    const second = await driver.run("a + 1");
    assert.deepEqual(second.done.result.data, { "text/plain": "2" });
    assert.equal(second.done.executionCount, 2);
  });

  it("awaits at top level, and the declaration persists", async () => {
    assert.equal(await driver.resultText("const r = await new Promise((resolve) => setTimeout(() => resolve(5), 5));\nr * 2"), "10");
    assert.equal(await driver.resultText("r"), "5");
    const { done } = await driver.run("class K {}\nvar v = 1\nfunction f() {}\nimplicit = 2");
    assert.deepEqual(done.names, ["K", "f", "implicit", "r", "v"]);
  });

  it("reports an exception with its name, message and the user's stack lines", async () => {
    await driver.run("let kept = 'yes'");
    const { done } = await driver.run('function boom() {\n  throw new TypeError("bad");\n}\nboom()');
    assert.equal(done.status, "error");
    assert.equal(done.error.name, "TypeError");
    assert.equal(done.error.value, "bad");
    assert.deepEqual(done.error.traceback, ["TypeError: bad", "    at boom (<cell 2>:2:9)", "    at <cell 2>:4:1"]);
    const late = await driver.run("await null;\nthrow new RangeError('after await')");
    assert.equal(late.done.error.name, "RangeError");
    assert.deepEqual(late.done.error.traceback, ["RangeError: after await", "    at <cell 3>:2:7"]);
    const thrown = await driver.run("throw 42");
    assert.deepEqual(thrown.done.error, { name: "number", value: "42", traceback: ["Uncaught 42"] });
    const syntax = await driver.run("function (");
    assert.equal(syntax.done.error.name, "SyntaxError");
    assert.ok(
      syntax.done.error.traceback.every((line) => !line.includes("node:")),
      syntax.done.error.traceback.join("\n"),
    );
    assert.equal(await driver.resultText("kept"), "'yes'");
  });

  it("breaks a synchronous `while (true) {}` on SIGINT, and the context stays", async () => {
    await driver.run("let a = 1");
    const id = driver.send('console.log("spinning");\nwhile (true) {}');
    await driver.waitForStdout("spinning");
    process.kill(driver.pid, "SIGINT");
    const { done } = await driver.finish(id);
    assert.equal(done.status, "interrupted");
    assert.match(done.error.value, /interrupted by `SIGINT`/);
    assert.equal(await driver.resultText("a + 1"), "2");
  });

  it("abandons an await on SIGINT", async () => {
    // "waiting" from a timer: printed once the synchronous part is over and the run awaits. (A SIGINT
    // just as the synchronous part ends can be lost inside Node's watchdog: the daemon re-sends.)
    const id = driver.send('setTimeout(() => console.log("waiting"), 0);\nawait new Promise(() => {})');
    await driver.waitForStdout("waiting");
    process.kill(driver.pid, "SIGINT");
    const { done } = await driver.finish(id);
    assert.equal(done.status, "interrupted");
    assert.equal(done.error.name, "Interrupted");
    assert.equal(await driver.resultText("1 + 1"), "2");
  });

  it("takes a SIGINT while idle harmlessly", async () => {
    await driver.run("let a = 41");
    process.kill(driver.pid, "SIGINT");
    const deadline = Date.now() + PATIENCE_MS;
    while (!tookSigint(driver.pid)) {
      assert.ok(Date.now() < deadline, "the driver never took the signal");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(driver.child.exitCode, null);
    assert.equal(await driver.resultText("a + 1"), "42");
  });

  it("stays alive for a SIGINT while idle after a cell removed every SIGINT listener", async () => {
    await driver.run('process.removeAllListeners("SIGINT");\nlet b = 2');
    process.kill(driver.pid, "SIGINT");
    const deadline = Date.now() + PATIENCE_MS;
    while (!tookSigint(driver.pid)) {
      assert.ok(Date.now() < deadline, "the driver never took the signal");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(await driver.resultText("b"), "2");
  });

  it("runs a 20 MB cell", async () => {
    assert.equal(await driver.resultText(`const s = "${"0123456789".repeat(2_000_000)}";\ns.length`), "20000000");
  });

  it("writes console.log to stdout and console.error to stderr before done, never to fd 4", async () => {
    const { displays, done } = await driver.run(
      'console.log("hello", { a: 1 });\nconsole.error("careful");\nprocess.stdout.write("x".repeat(1 << 20))',
    );
    assert.equal(done.status, "ok");
    assert.deepEqual(displays, []);
    const out = driver.stdout();
    assert.ok(out.startsWith("hello { a: 1 }\n"));
    assert.equal(out.length, "hello { a: 1 }\n".length + (1 << 20));
    assert.equal(driver.stderr(), "careful\n");
  });

  it("gives objects as application/json plus text/plain, other values as text", async () => {
    const { done } = await driver.run('({ city: "Oslo", temps: [3.5, 4] })');
    assert.deepEqual(done.result.data, {
      "text/plain": "{ city: 'Oslo', temps: [ 3.5, 4 ] }",
      "application/json": { city: "Oslo", temps: [3.5, 4] },
    });
    assert.deepEqual((await driver.run("new Map([[1, 2]])")).done.result.data, { "text/plain": "Map(1) { 1 => 2 }" });
    assert.deepEqual((await driver.run("const cyclic = {}; cyclic.self = cyclic; cyclic")).done.result.data, {
      "text/plain": "<ref *1> { self: [Circular *1] }",
    });
    assert.equal((await driver.run("undefined")).done.result, undefined);
  });

  it("sends display() values in order, as bundles, JSON or text", async () => {
    const code = [
      'display({ "text/html": "<b>bold</b>", "text/plain": "bold" })',
      "display([1, 2])",
      'display({ mimeBundle: () => ({ "text/markdown": "# title" }) })',
      'display(Buffer.from("89504e470d0a1a0a", "hex"))',
      'setTimeout(() => display("late"), 0)',
    ].join("\n");
    const { displays, done } = await driver.run(code);
    assert.equal(done.status, "ok");
    assert.deepEqual(
      displays.map((d) => d.data),
      [
        { "text/html": "<b>bold</b>", "text/plain": "bold" },
        { "text/plain": "[ 1, 2 ]", "application/json": [1, 2] },
        { "text/plain": "{ mimeBundle: [Function: mimeBundle] }", "text/markdown": "# title" },
        { "text/plain": "<Buffer 89 50 4e 47 0d 0a 1a 0a>", "image/png": "iVBORw0KGgo=" },
      ],
    );
    await driver.run("await new Promise((resolve) => setTimeout(resolve, 20))");
    assert.match(driver.stderr(), /display\(\) outside a run: dropped \(text\/plain\)/);
  });

  it("writes a value over maxInlineBytes to a file, and lists what is over the run's budget as omitted", async () => {
    const { done } = await driver.run("Array.from({ length: 50000 }, (_, i) => i)", { id: "big", maxInlineBytes: 10_000 });
    assert.deepEqual(Object.keys(done.result.data), ["text/plain"]);
    assert.equal(done.result.files["application/json"], join(driver.filesDir, "big-1.json"));
    assert.equal(JSON.parse(readFileSync(done.result.files["application/json"], "utf8")).length, 50000);
    const over = await driver.run("display(Array.from({ length: 50000 }, (_, i) => i))", { maxRunBytes: 10_000 });
    assert.deepEqual(
      over.done.omitted.map((o) => [o.mime, o.why]),
      [["application/json", "over the run's budget"]],
    );
    assert.ok(over.done.omitted[0].bytes > 10_000);
  });

  it("bounds a huge error message, and lists at most 100 omitted values before a sum", async () => {
    const { done } = await driver.run('throw new Error("x".repeat(10_000_000))');
    assert.ok(done.error.value.length < 70_000);
    assert.ok(done.error.traceback.join("\n").length < 300_000);
    const many = await driver.run('for (let i = 0; i < 1000; i++) display(String(i).padStart(6, "0"))', { maxRunBytes: 100 });
    assert.ok(many.displays.every((d) => Object.keys(d.data).length > 0));
    assert.equal(many.done.omitted.length, 101);
    assert.match(many.done.omitted[100].why, /^\d+ more values omitted$/);
  });

  it("keeps running after an uncaught error in a callback", async () => {
    await driver.run(
      'setTimeout(() => { throw new Error("async boom") }, 0);\nPromise.reject(new Error("rejected"));\nawait new Promise((r) => setTimeout(r, 20))',
    );
    assert.match(driver.stderr(), /Uncaught Error: async boom/);
    assert.match(driver.stderr(), /Uncaught \(in promise\) Error: rejected/);
    assert.equal(await driver.resultText("1 + 1"), "2");
  });

  it("keeps the channel fds close-on-exec, so children do not inherit them", async () => {
    const links = [3, 4].map((fd) => readlinkSync(`/proc/${driver.pid}/fd/${fd}`));
    for (const fd of [3, 4]) {
      const flags = Number.parseInt(/^flags:\s*([0-7]+)/m.exec(readFileSync(`/proc/${driver.pid}/fdinfo/${fd}`, "utf8"))[1], 8);
      assert.ok(flags & 0o2000000, `fd ${fd} lacks O_CLOEXEC`);
    }
    const { done } = await driver.run(
      'require("node:child_process").execSync("for fd in 3 4 5 6; do readlink /proc/$$/fd/$fd; done; true").toString()',
    );
    assert.equal(done.status, "ok");
    for (const link of links)
      assert.ok(!done.result.data["text/plain"].includes(link), `${link} leaked: ${done.result.data["text/plain"]}`);
  });

  it("exits 0 at EOF on fd 3", async () => {
    driver.child.stdio[3].end();
    assert.deepEqual(await driver.exited, { code: 0, signal: null });
    assert.deepEqual(readdirSync(driver.dir).sort(), ["stderr", "stdout"]);
  });
});
