import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { type BenchRow, median, pairRow, quantile, ROOT, samplePairs, startBenchDaemon } from "./common.js";

/** One way to reach the bench app: the port to connect to and the headers that name the app there. */
interface Route {
  port: number;
  headers: Record<string, string>;
}

const CLIENTS = 32;
const LOAD_MS = 1500;
const DOWNLOAD_MIB = 256;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

async function startApp(): Promise<{ proc: ChildProcess; port: number }> {
  const proc = spawn(process.execPath, [join(import.meta.dirname, "preview-app.js")], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve) => createInterface({ input: proc.stdout! }).once("line", (l) => resolve(Number(l))));
  return { proc, port };
}

/** A bare byte pipe from a loopback port to the app's, in a process of its own. */
function startPipe(appPort: number): Promise<{ proc: ChildProcess; port: number }> {
  const script = `const net = require("node:net");
net.createServer({ noDelay: true }, (c) => {
  const u = net.connect(${appPort}, "127.0.0.1");
  c.pipe(u); u.pipe(c);
  c.on("error", () => u.destroy()); u.on("error", () => c.destroy());
}).listen(0, "127.0.0.1", function () { console.log(this.address().port); });`;
  return startRelay(process.execPath, ["-e", script]);
}

/** The kernel's zero-copy relay (splice(2) through a pipe, bench/splice-relay.py): the ceiling of any relay here. */
function startSpliceRelay(appPort: number): Promise<{ proc: ChildProcess; port: number }> {
  return startRelay("/usr/bin/python3", [join(ROOT, "bench/splice-relay.py"), String(appPort)]);
}

/** Starts a relay process that prints its port on its first line. */
async function startRelay(command: string, args: string[]): Promise<{ proc: ChildProcess; port: number }> {
  const proc = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve) => createInterface({ input: proc.stdout! }).once("line", (l) => resolve(Number(l))));
  return { proc, port };
}

/** Debian's nginx as a reverse proxy to the app (one worker, upstream keep-alive, no buffering), or undefined without nginx. */
async function startNginx(appPort: number): Promise<{ proc: ChildProcess; port: number; dir: string } | undefined> {
  const dir = mkdtempSync(join(tmpdir(), "hotline-bench-nginx-"));
  mkdirSync(join(dir, "tmp"));
  const port = await freePort();
  writeFileSync(
    join(dir, "nginx.conf"),
    `worker_processes 1; daemon off; master_process on; pid ${dir}/nginx.pid; error_log ${dir}/error.log warn;
${process.getuid?.() === 0 ? "user root;" : ""}
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/tmp; proxy_temp_path ${dir}/tmp; fastcgi_temp_path ${dir}/tmp; uwsgi_temp_path ${dir}/tmp; scgi_temp_path ${dir}/tmp;
  upstream app { server 127.0.0.1:${appPort}; keepalive 64; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://app; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_set_header Host localhost:${appPort};
      proxy_buffering off; proxy_request_buffering off;
    }
  }
}
`,
  );
  try {
    await promisify(execFile)("nginx", ["-t", "-q", "-p", dir, "-c", join(dir, "nginx.conf")]);
  } catch (err) {
    process.stderr.write(`bench: preview: no nginx row (${(err as Error).message.split("\n")[0]})\n`);
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  const proc = spawn("nginx", ["-p", dir, "-c", join(dir, "nginx.conf")], { stdio: "ignore" });
  for (let i = 0; i < 100; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const req = request({ host: "127.0.0.1", port, path: "/small" }, (res) => {
        res.resume();
        resolve(true);
      });
      req.on("error", () => resolve(false));
      req.end();
    });
    if (up) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { proc, port, dir };
}

/** Requests/s of CLIENTS keep-alive clients doing GET /small for LOAD_MS, from a load process of its own. */
async function loadRate(route: Route): Promise<number> {
  const extra = Object.entries(route.headers).find(([k]) => k !== "Host");
  const { stdout } = await promisify(execFile)(process.execPath, [
    join(import.meta.dirname, "http-load.js"),
    String(route.port),
    route.headers.Host ?? "localhost",
    String(CLIENTS),
    String(LOAD_MS),
    ...(extra ? [`${extra[0]}=${extra[1]}`] : []),
  ]);
  const r = JSON.parse(stdout) as { requests: number; failed: number; ms: number };
  if (r.failed) throw new Error(`${r.failed} requests failed on port ${route.port}`);
  return r.requests / (r.ms / 1000);
}

/** One GET through a keep-alive agent; resolves with its milliseconds and bytes. */
function get(agent: Agent, route: Route, path: string): Promise<{ ms: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    let bytes = 0;
    const req = request({ host: "127.0.0.1", port: route.port, path, agent, headers: route.headers }, (res) => {
      res.on("data", (c: Buffer) => (bytes += c.length));
      res.on("end", () => resolve({ ms: performance.now() - t, bytes }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** Preview proxy vs a direct connection and vs nginx: small-GET rate, a 256 MiB download, added latency. */
export async function previewBenchmarks(): Promise<BenchRow[]> {
  const app = await startApp();
  const daemon = await startBenchDaemon();
  const nginx = await startNginx(app.port);
  try {
    const link = (await daemon.client.request("preview.open", { port: app.port, ttlMs: 3_600_000 })) as { url: string };
    const token = new URL(link.url).searchParams.get("hotline_preview_token")!;
    const daemonPort = Number(new URL(daemon.url).port);
    const preview: Route = { port: daemonPort, headers: { Host: `${app.port}.localhost:${daemonPort}`, "X-Hotline-Preview-Token": token } };
    const direct: Route = { port: app.port, headers: { Host: `localhost:${app.port}` } };
    const rows: BenchRow[] = [];

    // Rate: pairs of load runs, alternating order; each side reports its rate as a "time" of 1/rate.
    const rate = (route: Route) => async () => 1000 / (await loadRate(route));
    if (nginx) {
      const viaNginx: Route = { port: nginx.port, headers: { Host: "localhost" } };
      const samples = await samplePairs(5, 1, rate(preview), rate(viaNginx));
      const r = pairRow(
        `preview: GET /small req/s, ${CLIENTS} keep-alive clients, vs nginx reverse proxy`,
        samples,
        "≥ 0.7× nginx",
        (x) => 1 / x >= 0.7,
      );
      rows.push(toRate(r));
    }
    const rateDirect = await samplePairs(3, 1, rate(preview), rate(direct));
    rows.push(
      toRate(pairRow(`preview: GET /small req/s, ${CLIENTS} keep-alive clients, vs direct`, rateDirect, "(no goal)", () => undefined)),
    );

    // Throughput: a 256 MiB download, preview vs direct.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const big = `/big?size=${DOWNLOAD_MIB * 1024 * 1024}`;
    const download = (route: Route) => async () => (await get(agent, route, big)).ms;
    const dl = await samplePairs(5, 1, download(preview), download(direct));
    rows.push(pairRow(`preview: ${DOWNLOAD_MIB} MiB download vs direct`, dl, "≥ 0.8× direct", (x) => x >= 0.8, DOWNLOAD_MIB));

    // The API while a preview streams: state.info round trips every 10 ms during three downloads,
    // against the same round trips on the idle daemon.
    const idleMs: number[] = [];
    for (let i = 0; i < 100; i++) {
      const t = performance.now();
      await daemon.client.request("state.info", {});
      idleMs.push(performance.now() - t);
    }
    const infoMs: number[] = [];
    let streaming = true;
    const sampler = (async () => {
      while (streaming) {
        const t = performance.now();
        await daemon.client.request("state.info", {});
        infoMs.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    for (let i = 0; i < 3; i++) await download(preview)();
    streaming = false;
    await sampler;
    rows.push({
      name: `preview: state.info round trip while ${DOWNLOAD_MIB} MiB downloads stream (max ${Math.max(...infoMs).toFixed(1)} ms, ${infoMs.length} samples)`,
      value: quantile(infoMs, 0.99),
      baseline: quantile(idleMs, 0.99),
      ratio: quantile(infoMs, 0.99) / quantile(idleMs, 0.99),
      unit: "ms p99 (baseline: idle)",
      goal: "< 100 ms",
      met: Math.max(...infoMs) < 100,
    });
    if (nginx) {
      const viaNginx: Route = { port: nginx.port, headers: { Host: "localhost" } };
      const dlNginx = await samplePairs(3, 1, download(preview), download(viaNginx));
      rows.push(pairRow(`preview: ${DOWNLOAD_MIB} MiB download vs nginx`, dlNginx, "(no goal)", () => undefined, DOWNLOAD_MIB));
    }

    // The floor of any proxy written in Node: a bare socket-to-socket pipe, no HTTP at all, in a
    // process of its own. On 2 cores the extra hop's kernel copies are most of the cost (perf).
    const pipe = await startPipe(app.port);
    try {
      const viaPipe: Route = { port: pipe.port, headers: { Host: `localhost:${app.port}` } };
      const dlPipe = await samplePairs(3, 1, download(preview), download(viaPipe));
      rows.push(
        pairRow(`preview: ${DOWNLOAD_MIB} MiB download vs a bare Node socket pipe`, dlPipe, "(no goal)", () => undefined, DOWNLOAD_MIB),
      );
      const dlPipeDirect = await samplePairs(3, 1, download(viaPipe), download(direct));
      rows.push(
        pairRow(
          `bare Node socket pipe: ${DOWNLOAD_MIB} MiB download vs direct (for scale)`,
          dlPipeDirect,
          "(no goal)",
          () => undefined,
          DOWNLOAD_MIB,
        ),
      );
    } finally {
      pipe.proc.kill();
    }

    // The ceiling of any relay on this machine, zero-copy in the kernel: if it stays under the goal
    // too, the goal is beyond what an extra hop can give on this machine.
    const splice = await startSpliceRelay(app.port);
    try {
      const viaSplice: Route = { port: splice.port, headers: { Host: `localhost:${app.port}` } };
      const dlSpliceDirect = await samplePairs(5, 1, download(viaSplice), download(direct));
      rows.push(
        pairRow(
          `splice(2) relay: ${DOWNLOAD_MIB} MiB download vs direct (the ceiling of any relay, for scale)`,
          dlSpliceDirect,
          "(no goal)",
          () => undefined,
          DOWNLOAD_MIB,
        ),
      );
      const dlSplice = await samplePairs(5, 1, download(preview), download(viaSplice));
      rows.push(
        pairRow(`preview: ${DOWNLOAD_MIB} MiB download vs the splice(2) relay`, dlSplice, "(no goal)", () => undefined, DOWNLOAD_MIB),
      );
    } finally {
      splice.proc.kill();
    }

    // Added latency: sequential small GETs on one keep-alive socket each, interleaved; p50 difference.
    const ours: number[] = [];
    const floor: number[] = [];
    const a1 = new Agent({ keepAlive: true, maxSockets: 1 });
    const a2 = new Agent({ keepAlive: true, maxSockets: 1 });
    for (let i = 0; i < 2200; i++) {
      const x = await get(a1, preview, "/small");
      const z = await get(a2, direct, "/small");
      if (i < 200) continue; // warm-up
      ours.push(x.ms);
      floor.push(z.ms);
    }
    const added = median(ours) - median(floor);
    rows.push({
      name: `preview: added latency p50 of a small GET (one keep-alive client; p90 ${(quantile(ours, 0.9) - quantile(floor, 0.9)).toFixed(3)} ms)`,
      value: median(ours),
      baseline: median(floor),
      ratio: median(ours) / median(floor),
      unit: `ms (added ${added.toFixed(3)})`,
      goal: "≤ 0.3 ms added",
      met: added <= 0.3,
    });
    for (const a of [agent, a1, a2]) a.destroy();
    return rows;
  } finally {
    await daemon.stop();
    app.proc.kill();
    if (nginx) {
      nginx.proc.kill("SIGQUIT");
      await new Promise((r) => nginx.proc.once("exit", r));
      rmSync(nginx.dir, { recursive: true, force: true });
    }
  }
}

/** A pair row of 1/rate "times" shown as requests/s (higher is better; ratio ours / baseline). */
function toRate(r: BenchRow): BenchRow {
  return {
    ...r,
    value: 1000 / r.value,
    baseline: 1000 / r.baseline,
    ratio: 1 / r.ratio,
    unit: "req/s",
    spread: r.spread && [1 / r.spread[1], 1 / r.spread[0]],
  };
}
