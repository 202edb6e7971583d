// hotline's JavaScript driver: one code context's Node.js interpreter, driven by the daemon one run at a time.
// Wire protocol v1 (PROTOCOL.md beside this file): NDJSON requests on fd 3, NDJSON messages on fd 4; fds 0/1/2 are
// the user's own. Node's standard library only (Node >= 20). Code runs through Node's own REPL evaluator
// (node:repl), which gives top-level await, declarations that persist between runs and the last value.
import { EventEmitter } from "node:events";
import fs from "node:fs";
import net from "node:net";
import repl from "node:repl";
import { PassThrough, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import util from "node:util";

const DRIVER_PATH = fileURLToPath(import.meta.url);
const O_CLOEXEC = 0o2000000;
const DEFAULT_MAX_INLINE = 1 << 20;
const DEFAULT_MAX_LINE = 8 << 20;
const DEFAULT_RUN_BUDGET = 64 << 20;
/** text/plain is always inline, so it is bounded on its own (characters). */
const PLAIN_TEXT_LIMIT = 64 * 1024;
/** Room kept in a message line for everything but the bundle's values. */
const LINE_MARGIN = 64 * 1024;
const NAMES_LIMIT = 256;
const NAME_CHARS = 1024; // a longer global name is counted, not listed
/** An error's message, and its stack as a whole, are bounded (characters); a line of it too. */
const ERROR_VALUE_LIMIT = 64 * 1024;
const TRACEBACK_LIMIT = 256 * 1024;
const TRACEBACK_LINE_LIMIT = 8 * 1024;
const OMITTED_LIMIT = 100; // entries listed one by one; the rest are summed up in one more
const BINARY_MIMES = new Set(["image/png", "image/jpeg"]);
const EXTENSIONS = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/svg+xml": "svg",
  "text/html": "html",
  "text/markdown": "md",
  "text/plain": "txt",
  "application/json": "json",
};
const MIME_KEY = /^[a-z]+\/[a-z0-9.+-]+$/i;
const INSPECT_OPTIONS = { depth: 4, maxArrayLength: 100, maxStringLength: 10_000, breakLength: 120 };

// ---- the channel ---------------------------------------------------------------------------------

/**
 * The fd, made close-on-exec so no child of user code inherits it. Node marks inherited descriptors
 * close-on-exec at start-up itself (not a documented promise), so this checks; a pipe that is not gets
 * reopened through /proc (Node opens everything O_CLOEXEC); anything else is reported on stderr.
 */
function sealed(fd, flags) {
  try {
    const info = fs.readFileSync(`/proc/self/fdinfo/${fd}`, "utf8");
    const mode = Number.parseInt(/^flags:\s*([0-7]+)/m.exec(info)?.[1] ?? "0", 8);
    if (mode & O_CLOEXEC) return fd;
    if (fs.fstatSync(fd).isFIFO()) {
      const reopened = fs.openSync(`/proc/self/fd/${fd}`, flags);
      fs.closeSync(fd);
      return reopened;
    }
  } catch (err) {
    process.stderr.write(`js_driver: fd ${fd}: ${err.message}\n`);
    if (err.code === "EBADF" || err.code === "ENOENT") process.exit(2);
  }
  process.stderr.write(`js_driver: fd ${fd} could not be made close-on-exec; children may inherit it\n`);
  return fd;
}

const requestFd = sealed(3, "r");
const messageFd = sealed(4, "w");
const pause = new Int32Array(new SharedArrayBuffer(4));

function writeAll(buffer) {
  let offset = 0;
  while (offset < buffer.length) {
    try {
      offset += fs.writeSync(messageFd, buffer, offset);
    } catch (err) {
      if (err.code === "EAGAIN") Atomics.wait(pause, 0, 0, 1);
      else if (err.code === "EPIPE")
        process.exit(0); // the daemon is gone
      else throw err;
    }
  }
}

function send(message) {
  // JSON.stringify escapes lone surrogates, so the line is always valid UTF-8.
  writeAll(Buffer.from(`${JSON.stringify(message)}\n`));
}

// ---- the evaluator ---------------------------------------------------------------------------------

// The REPL binds its evaluator to a domain, whose error handler would print a run's exception to the
// REPL's output instead of handing it to the callback (and enable domain async hooks for the process).
// A stand-in domain that binds nothing sends every error to the callback.
const noDomain = Object.assign(new EventEmitter(), { bind: (fn) => fn, add() {}, remove() {} });
const server = repl.start({
  input: new PassThrough(),
  output: new Writable({ write: (_chunk, _encoding, done) => done() }), // prompts only: nothing for the user
  prompt: "",
  terminal: false,
  useGlobal: false,
  breakEvalOnSigint: true,
  domain: noDomain,
});
server.removeAllListeners("SIGINT"); // the REPL's own ("press Ctrl+C again to exit") must never run
const { context, lexicalNames } = await freshContext();
delete context._;
delete context._error;
Object.defineProperty(context, "console", { value: console, writable: true, configurable: true }); // to fds 1 and 2
context.display = display;
const baseline = new Set(Object.getOwnPropertyNames(context));

/**
 * The REPL's context, made anew while an inspector session watches, so its execution context id is
 * known: let/const/class names are no properties of a global, only the inspector lists them
 * (as the REPL's own completion does). Without an inspector (a Node built without one), none are listed.
 */
async function freshContext() {
  let session;
  try {
    const { Session } = await import("node:inspector");
    session = new Session();
    session.connect();
  } catch {
    server.resetContext();
    return { context: server.context, lexicalNames: () => [] };
  }
  let id;
  session.post("Runtime.enable"); // reports the existing contexts first, synchronously
  session.once("Runtime.executionContextCreated", ({ params }) => {
    id = params.context.id;
  });
  server.resetContext();
  session.post("Runtime.disable");
  const lexicalNames = () => {
    let names = [];
    if (id !== undefined)
      session.post("Runtime.globalLexicalScopeNames", { executionContextId: id }, (err, reply) => {
        if (!err) names = reply.names;
      });
    return names;
  };
  return { context: server.context, lexicalNames };
}

function userNames() {
  const own = Object.getOwnPropertyNames(context).filter((name) => !baseline.has(name));
  const all = [...new Set([...own, ...lexicalNames()])].sort();
  return { names: all.filter((name) => name.length <= NAME_CHARS).slice(0, NAMES_LIMIT), total: all.length };
}

// ---- interrupts ------------------------------------------------------------------------------------

/** Set while a run awaits its promise: a SIGINT then abandons the wait. */
let interruptWait = null;
function onSigint() {
  if (interruptWait) interruptWait();
  // Otherwise idle (or the run is being reported): harmless.
}
process.on("SIGINT", onSigint);
server.on("SIGINT", onSigint); // a SIGINT the REPL's watchdog saw just after the synchronous part

/** {value} | {err} | {interrupted: "await"} of one run's code. */
function evaluate(code, file) {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome) => {
      if (settled) return;
      settled = true;
      interruptWait = null;
      resolve(outcome);
    };
    interruptWait = () => settle({ interrupted: "await" });
    // vm removes every SIGINT listener while a breakOnSigint script runs; libuv then restores the default
    // action over the SIGINT watchdog the REPL started first, and a SIGINT would kill the driver. So the
    // listeners step aside for the synchronous part (and come back before any await can settle).
    const listeners = process.rawListeners("SIGINT");
    process.removeAllListeners("SIGINT");
    try {
      server.eval(code, context, file, (err, value) => settle(err === null ? { value } : { err }));
    } catch (err) {
      settle({ err });
    } finally {
      for (const listener of listeners) process.on("SIGINT", listener);
    }
  });
}

// ---- MIME bundles ----------------------------------------------------------------------------------

function plainText(value) {
  let text;
  try {
    text = util.inspect(value, INSPECT_OPTIONS);
  } catch (err) {
    text = `[value that cannot be inspected: ${err?.message ?? err}]`;
  }
  return text.length > PLAIN_TEXT_LIMIT ? `${text.slice(0, PLAIN_TEXT_LIMIT)}… [${text.length - PLAIN_TEXT_LIMIT} more characters]` : text;
}

function isBytes(value) {
  return util.types.isUint8Array(value);
}

function imageMime(value) {
  if (!isBytes(value) || value.length < 4) return undefined;
  if (value[0] === 0x89 && value[1] === 0x50 && value[2] === 0x4e && value[3] === 0x47) return "image/png";
  if (value[0] === 0xff && value[1] === 0xd8 && value[2] === 0xff) return "image/jpeg";
  return undefined;
}

function isPlainObject(value) {
  if (value === null || typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value);
  return proto === null || Object.getPrototypeOf(proto) === null; // any realm's Object.prototype
}

/** Arrays, plain objects and objects with toJSON serialise to what they are; a Map, a class instance or bytes would not. */
function jsonWorthy(value) {
  if (value === null || typeof value !== "object" || util.types.isProxy(value) || ArrayBuffer.isView(value)) return false;
  return Array.isArray(value) || isPlainObject(value) || typeof value.toJSON === "function";
}

/**
 * The bundle a value declares: its mimeBundle (a method or an object), or, for display(), a plain
 * {mime: value} object (`shaped`, which is the bundle itself: no text/plain is added to it).
 */
function declaredBundle(value, mimeShaped) {
  let bundle;
  let shaped = false;
  try {
    const declared = value?.mimeBundle;
    bundle = typeof declared === "function" ? declared.call(value) : declared;
  } catch (err) {
    process.stderr.write(`display: mimeBundle() threw: ${err?.message ?? err}\n`);
  }
  if (bundle === undefined && mimeShaped && isPlainObject(value)) {
    const keys = Object.keys(value);
    if (keys.length > 0 && keys.every((key) => MIME_KEY.test(key))) {
      bundle = value;
      shaped = true;
    }
  }
  if (!isPlainObject(bundle)) return undefined;
  const data = {};
  for (const [mime, item] of Object.entries(bundle)) {
    if (!MIME_KEY.test(mime) || item === undefined || item === null) continue;
    if (BINARY_MIMES.has(mime)) {
      if (isBytes(item)) data[mime] = Buffer.from(item.buffer, item.byteOffset, item.byteLength);
      else if (typeof item === "string") data[mime] = item;
    } else if (mime === "application/json" || mime.endsWith("+json")) {
      data[mime] = item;
    } else if (typeof item === "string") {
      data[mime] = item;
    }
  }
  return { data, shaped };
}

/** The MIME bundle of a value: {mime: string | Buffer (binary) | JSON value}. */
function bundleOf(value, mimeShaped = false) {
  const declared = declaredBundle(value, mimeShaped);
  if (declared) {
    if (!declared.shaped && typeof declared.data["text/plain"] !== "string") declared.data["text/plain"] = plainText(value);
    return declared.data;
  }
  const data = { "text/plain": plainText(value) };
  const image = imageMime(value);
  if (image) data[image] = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (jsonWorthy(value)) {
    try {
      const text = JSON.stringify(value);
      if (text !== undefined) data["application/json"] = JSON.parse(text);
    } catch {
      // Not serialisable (a cycle, a BigInt): text/plain says what it is.
    }
  }
  return data;
}

// ---- a run's outputs: inline, in files, or omitted, within the budget -------------------------------

function positive(value, fallback) {
  return Number.isSafeInteger(value) && value > 0 ? value : fallback;
}

class Run {
  constructor(request) {
    this.id = String(request.id ?? "");
    this.filesDir = typeof request.filesDir === "string" ? request.filesDir : undefined;
    this.maxInline = positive(request.maxInlineBytes, DEFAULT_MAX_INLINE);
    this.maxLine = positive(request.maxLineBytes, DEFAULT_MAX_LINE);
    this.budget = positive(request.maxRunBytes, DEFAULT_RUN_BUDGET);
    this.used = 0;
    this.files = 0;
    this.omitted = [];
    this.omittedMore = { count: 0, bytes: 0 };
  }

  omit(mime, bytes, why) {
    if (this.omitted.length < OMITTED_LIMIT) this.omitted.push({ mime, bytes, why });
    else {
      this.omittedMore.count += 1;
      this.omittedMore.bytes += bytes;
    }
  }

  omittedList() {
    const { count, bytes } = this.omittedMore;
    return count === 0 ? this.omitted : [...this.omitted, { mime: "*", bytes, why: `${count} more values omitted` }];
  }

  /** {data, files?, metadata?}: values encoded, large ones in files, none beyond the budget. */
  package(data) {
    const encoded = [];
    const metadata = {};
    for (const [mime, value] of Object.entries(data)) {
      if (BINARY_MIMES.has(mime)) {
        const content = Buffer.isBuffer(value) ? value : undefined;
        const wire = content ? content.toString("base64") : String(value);
        if (mime === "image/png" && content) {
          const size = pngSize(content);
          if (size) metadata[mime] = size;
        }
        encoded.push({ mime, wire, size: wire.length + 2, content });
        continue;
      }
      const wire = mime === "text/plain" && value.length > PLAIN_TEXT_LIMIT ? `${value.slice(0, PLAIN_TEXT_LIMIT)}… [truncated]` : value;
      const text = JSON.stringify(wire);
      const isJson = mime === "application/json" || mime.endsWith("+json");
      encoded.push({ mime, wire, size: Buffer.byteLength(text), content: isJson ? text : undefined });
    }
    const inline = {};
    const files = {};
    let lineRoom = this.maxLine - LINE_MARGIN;
    // text/plain first (always inline), then smallest first: one huge value cannot crowd out the small ones.
    encoded.sort((a, b) => (a.mime !== "text/plain") - (b.mime !== "text/plain") || a.size - b.size);
    for (const { mime, wire, size, content } of encoded) {
      if (this.used + size > this.budget) {
        this.omit(mime, size, "over the run's budget");
        continue;
      }
      if (mime === "text/plain" || (size <= this.maxInline && size <= lineRoom)) {
        inline[mime] = wire;
        lineRoom -= size;
      } else {
        const path = this.writeFile(mime, wire, content);
        if (path === undefined) continue;
        files[mime] = path;
      }
      this.used += size;
    }
    const packaged = { data: inline };
    if (Object.keys(files).length > 0) packaged.files = files;
    const kept = Object.fromEntries(Object.entries(metadata).filter(([mime]) => mime in inline || mime in files));
    if (Object.keys(kept).length > 0) packaged.metadata = kept;
    return packaged;
  }

  writeFile(mime, wire, content) {
    if (!this.filesDir) {
      this.omit(mime, 0, "too large to send inline and the run has no filesDir");
      return undefined;
    }
    this.files += 1;
    const safeId = this.id.replace(/[^A-Za-z0-9._-]/g, "_") || "run";
    const path = `${this.filesDir}/${safeId}-${this.files}.${EXTENSIONS[mime] ?? "bin"}`;
    const bytes = content === undefined ? Buffer.from(wire, BINARY_MIMES.has(mime) ? "base64" : "utf8") : Buffer.from(content);
    try {
      fs.mkdirSync(this.filesDir, { recursive: true });
      fs.writeFileSync(path, bytes);
    } catch (err) {
      this.omit(mime, bytes.length, `could not write its file: ${err.message}`);
      return undefined;
    }
    return path;
  }
}

function pngSize(bytes) {
  if (bytes.length < 24 || bytes.toString("latin1", 12, 16) !== "IHDR") return undefined;
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

/** The run in progress, or null while idle. */
let current = null;

/** display(...values): each as a rich output of the current run (a mimeBundle, a {mime: value} object, JSON or text). */
function display(...values) {
  for (const value of values) {
    const data = bundleOf(value, true);
    if (current === null) {
      process.stderr.write(`display() outside a run: dropped (${Object.keys(data).sort().join(", ")})\n`);
      continue;
    }
    const packaged = current.package(data);
    // Every value omitted: the run's "done" lists them.
    if (Object.keys(packaged.data).length > 0 || packaged.files) send({ type: "display", id: current.id, ...packaged });
  }
}

// ---- running code ----------------------------------------------------------------------------------

const FRAME = /^\s+at /;
const ENTRY = (line) => FRAME.test(line) && (line.includes("node:repl") || line.includes(DRIVER_PATH));
const BELOW_USER = (line) => FRAME.test(line) && /node:vm|node:internal\/vm|node:internal\/process\/task_queues/.test(line);

/** The user's part of a stack: cut where the REPL (or this driver) called in, and the vm frames just above. */
function userStack(stack) {
  const lines = stack.split("\n");
  let end = lines.findIndex(ENTRY);
  if (end < 0) end = lines.length;
  while (end > 1 && BELOW_USER(lines[end - 1])) end -= 1;
  return lines.slice(0, end);
}

function bounded(text, limit) {
  return text.length <= limit ? text : `${text.slice(0, limit)}… [${text.length - limit} more characters]`;
}

/** Each line and the whole bounded: the first lines and the last ones are kept. */
function boundedLines(all) {
  const lines = all.map((line) => bounded(line, TRACEBACK_LINE_LIMIT));
  if (lines.reduce((sum, line) => sum + line.length, 0) <= TRACEBACK_LIMIT) return lines;
  const head = [];
  const tail = [];
  let room = TRACEBACK_LIMIT / 4;
  while (lines.length > 0 && lines[0].length <= room) {
    room -= lines[0].length;
    head.push(lines.shift());
  }
  room += TRACEBACK_LIMIT / 2;
  while (lines.length > 0 && lines[lines.length - 1].length <= room) {
    room -= lines[lines.length - 1].length;
    tail.unshift(lines.pop());
  }
  return [...head, `… [${lines.length} lines omitted]`, ...tail];
}

/** {name, value, traceback} of a thrown value, as the user would see it, bounded. */
function describe(thrown) {
  const { name, value, traceback } = describeWhole(thrown);
  return { name: bounded(name, 1024), value: bounded(value, ERROR_VALUE_LIMIT), traceback: boundedLines(traceback) };
}

function describeWhole(thrown) {
  const err = thrown instanceof repl.Recoverable ? thrown.err : thrown;
  try {
    if (err !== null && typeof err === "object" && typeof err.stack === "string") {
      return { name: String(err.name ?? "Error"), value: String(err.message ?? ""), traceback: userStack(err.stack) };
    }
  } catch {
    // A throwing getter: described by inspect below.
  }
  const value = plainText(err);
  const name = err === null ? "null" : typeof err === "object" ? String(err.constructor?.name ?? "Object") : typeof err;
  return { name, value, traceback: [`Uncaught ${value}`] };
}

function flushStdio() {
  const flushed = (stream) =>
    new Promise((resolve) => {
      try {
        stream.write("", () => resolve());
      } catch {
        resolve();
      }
    });
  return Promise.all([flushed(process.stdout), flushed(process.stderr)]);
}

let executionCount = 0;

async function run(request) {
  const thisRun = new Run(request);
  current = thisRun;
  executionCount += 1;
  let status = "ok";
  let error;
  let result;
  const outcome =
    typeof request.code === "string"
      ? await evaluate(request.code, `<cell ${executionCount}>`)
      : { err: new TypeError("the run request has no code string") };
  if (outcome.interrupted) {
    status = "interrupted";
    error = {
      name: "Interrupted",
      value: "SIGINT while awaiting: the wait was abandoned; work it started (timers, callbacks) may still run",
      traceback: [],
    };
  } else if ("err" in outcome) {
    status = outcome.err?.code === "ERR_SCRIPT_EXECUTION_INTERRUPTED" ? "interrupted" : "error";
    error = describe(outcome.err);
  } else if (outcome.value !== undefined) {
    result = thisRun.package(bundleOf(outcome.value));
  }
  // A cell may have removed every SIGINT listener; without ours, a SIGINT while idle would end the driver.
  if (!process.listeners("SIGINT").includes(onSigint)) process.on("SIGINT", onSigint);
  await flushStdio();
  const { names, total } = userNames();
  const done = { type: "done", id: thisRun.id, status, executionCount, names };
  if (total > names.length) done.namesTotal = total;
  if (result) done.result = result;
  if (error) done.error = error;
  current = null; // from here a display() of a timer is dropped, not sent after "done"
  if (thisRun.omitted.length > 0) done.omitted = thisRun.omittedList();
  send(done);
}

/** A bug of the driver's own still answers the run (the daemon waits for exactly one "done"). */
function driverFailed(request, err) {
  current = null;
  process.stderr.write(`js_driver: ${err?.stack ?? err}\n`);
  const error = { name: "DriverError", value: String(err?.message ?? err), traceback: [] };
  send({ type: "done", id: String(request.id ?? ""), status: "error", executionCount, names: [], error });
}

// An exception or rejection from a callback of user code is the user's: reported, never fatal to the context.
process.on("uncaughtException", (err) => process.stderr.write(`Uncaught ${describe(err).traceback.join("\n")}\n`));
process.on("unhandledRejection", (reason) => process.stderr.write(`Uncaught (in promise) ${describe(reason).traceback.join("\n")}\n`));

let queue = Promise.resolve();
/** The start of a line not yet complete (chunks, so a huge line is joined once, not rescanned per chunk). */
let partial = [];
const requests = new net.Socket({ fd: requestFd, readable: true, writable: false });
requests.setEncoding("utf8");
requests.on("data", (chunk) => {
  let start = 0;
  for (let newline = chunk.indexOf("\n"); newline >= 0; newline = chunk.indexOf("\n", start)) {
    partial.push(chunk.slice(start, newline));
    start = newline + 1;
    const line = partial.join("");
    partial = [];
    if (line.trim()) accept(line);
  }
  if (start < chunk.length) partial.push(chunk.slice(start));
});

function accept(line) {
  let request;
  try {
    request = JSON.parse(line);
  } catch (err) {
    process.stderr.write(`js_driver: ignored a request that is not JSON: ${err.message}\n`);
    return;
  }
  if (request?.type !== "run") {
    process.stderr.write(`js_driver: ignored a request of type ${JSON.stringify(request?.type)}\n`);
    return;
  }
  queue = queue.then(() => run(request)).catch((err) => driverFailed(request, err));
}
// EOF on fd 3: stop (after the run in progress, if any, has answered).
requests.on("end", () => queue.then(flushStdio).then(() => process.exit(0)));
requests.on("error", (err) => {
  process.stderr.write(`js_driver: fd 3: ${err.message}\n`);
  process.exit(1);
});

send({
  type: "ready",
  protocol: 1,
  language: "javascript",
  version: process.versions.node,
  executable: process.execPath,
  pid: process.pid,
});
