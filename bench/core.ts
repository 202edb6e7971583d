import { spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import WebSocket from "ws";
import { type BenchDaemon, type BenchRow, median, pairRow, quantile, row, samplePairs, startBenchDaemon } from "./common.js";

/** The raw `ws` server of bench/raw-ws-server.ts in a process of its own. */
export async function startRawServer(): Promise<{ url: string; stop(): void }> {
  const proc = spawn(process.execPath, [join(import.meta.dirname, "raw-ws-server.js")], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise<string>((resolve) => createInterface({ input: proc.stdout! }).once("line", resolve));
  return { url, stop: () => proc.kill() };
}

/** A plain `ws` client (no per-message deflate, as on the daemon's side). */
function openPlain(url: string, token?: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false, ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}) });
    ws.once("open", () => resolve(ws));
    ws.once("error", reject);
  });
}

/** Sends one JSON request on a plain socket and resolves with the parsed reply of that id. */
let nextId = 1;
function plainRequest(ws: WebSocket, action: string, params: object = {}): Promise<unknown> {
  const id = nextId++;
  return new Promise((resolve) => {
    const onMessage = (data: Buffer, isBinary: boolean): void => {
      if (isBinary) return;
      const reply = JSON.parse(data.toString()) as { id?: number };
      if (reply.id !== id) return;
      ws.off("message", onMessage);
      resolve(reply);
    };
    ws.on("message", onMessage);
    ws.send(JSON.stringify({ id, action, ...params }));
  });
}

/** Asks the raw server to time a spawn("true") in its own process; resolves with its milliseconds. */
function leanSpawn(ws: WebSocket): Promise<number> {
  return new Promise((resolve) => {
    const onMessage = (data: Buffer, isBinary: boolean): void => {
      const text = isBinary ? "" : data.toString();
      if (!text.startsWith("spawned:")) return;
      ws.off("message", onMessage);
      resolve(Number(text.slice(8)));
    };
    ws.on("message", onMessage);
    ws.send("spawn");
  });
}

/** Asks the raw server to spawn `true` and answer at its exit: one raw round trip plus a bare spawn. */
function rawRun(ws: WebSocket): Promise<void> {
  return new Promise((resolve) => {
    const onMessage = (data: Buffer, isBinary: boolean): void => {
      if (isBinary || data.toString() !== "ran") return;
      ws.off("message", onMessage);
      resolve();
    };
    ws.on("message", onMessage);
    ws.send("run");
  });
}

/**
 * Reads one stream on a plain socket until `done(bytes, frame)` says so, counting output bytes:
 * binary frames carry a 4-byte header length and the header before the bytes (the raw floor sends
 * bare bytes: its header length is taken as absent); text frames are parsed, as any JSON reader must.
 * It ends on `done` or `endsOn`, or with `stopAtExpect` once the bytes expected are in (a live job).
 */
function readStream(
  ws: WebSocket,
  start: () => void,
  expect: number,
  endsOn: (event: { event?: string; ok?: boolean; job?: string }) => boolean,
  headed: boolean,
  stopAtExpect = false,
): Promise<void> {
  let got = 0;
  return new Promise<void>((resolve, reject) => {
    const finish = (err?: Error): void => {
      ws.off("message", onMessage);
      if (err) reject(err);
      else if (got !== expect) reject(new Error(`stream delivered ${got} of ${expect} bytes (headed: ${headed})`));
      else resolve();
    };
    const onMessage = (data: Buffer, isBinary: boolean): void => {
      if (isBinary) {
        got += headed ? data.length - 4 - data.readUInt32BE(0) : data.length;
        if (stopAtExpect && got >= expect) finish(); // a live job: its follower goes on
        return;
      }
      const text = data.toString();
      if (text === "done") return finish();
      const event = JSON.parse(text) as { event?: string; ok?: boolean; job?: string; data?: string; error?: unknown };
      if (event.ok === false) return finish(new Error(`follow refused: ${JSON.stringify(event.error)}`));
      if (event.event === "job.output") got += event.data!.length; // ASCII here: characters are bytes
      if (endsOn(event) || (stopAtExpect && got >= expect)) finish();
    };
    ws.on("message", onMessage);
    start();
  });
}

/** The default output cap is 64 MiB: a 48 MiB job is kept whole, as users run it. */
const STREAM_MIB = 48;
const STREAM_BYTES = STREAM_MIB * 1024 * 1024;
/**
 * Pairs per follow row: a pair's ratio spreads ±15 % on two shared cores (p25–p75), and with 60 the
 * median of the same row moved 0.74–0.91 between consecutive runs; 150 pin it down to a few percent.
 */
const FOLLOW_PAIRS = 150;
/** Pairs run first and dropped (the page cache, TCP windows and V8's code warm up). */
const FOLLOW_WARMUP = 3;
const MAKE_OUTPUT = `head -c ${STREAM_BYTES} /dev/zero | tr '\\0' 'a'`;

/**
 * The core rows: round trip, job start, follow throughput against the raw floors, memory.
 * `latencyOnly`: the round-trip and job-start rows alone (`npm run bench core-latency`).
 */
export async function coreBenchmarks(latencyOnly = false): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const raw = await startRawServer();
  const daemon = await startBenchDaemon(); // the default output cap
  try {
    const rawWs = await openPlain(raw.url);
    const ours = await openPlain(daemon.url, daemon.token);

    // 1. state.info round trip; the floor parses the request and replies with the daemon's reply
    //    object. The same plain client on both sides parses every reply.
    const { id: _id, ...infoReply } = (await plainRequest(ours, "state.info")) as { id: number };
    rawWs.send(`reply:${JSON.stringify(infoReply)}`);
    rows.push(
      pairRow(
        "state.info round trip vs a raw ws server (own process) parsing the request and replying the same object",
        await samplePairs(
          3000,
          300,
          () => plainRequest(ours, "state.info"),
          () => plainRequest(rawWs, "state.info"),
        ),
        "≤ 1.3×",
        (r) => r <= 1.3,
      ),
    );

    // 2. A job running `true`, start to exit (one request with wait, through the client library)
    //    vs a bare spawn from this process.
    rows.push(
      pairRow(
        'shell ["true"] with wait, start→exit (client library) vs child_process.spawn("true")',
        await samplePairs(
          400,
          40,
          () => daemon.client.request("shell", { command: ["true"], wait: 10_000 }),
          () => new Promise((resolve) => spawn("true").once("exit", () => resolve(undefined))),
        ),
        "≤ 1.3×",
        (r) => r <= 1.3,
      ),
    );

    // 2b. The same against the truest floor: the spawn timed inside the raw server's lean process,
    //     whose fork copies less memory than this bench's (or the daemon's). Reported, no goal.
    rows.push(
      pairRow(
        'shell ["true"] with wait (client library) vs spawn("true") timed in a lean node process (no goal: the fork floor)',
        await samplePairs(
          400,
          40,
          () => daemon.client.request("shell", { command: ["true"], wait: 10_000 }),
          () => leanSpawn(rawWs),
        ),
        "reported",
        () => undefined,
      ),
    );

    // 2c. The job's whole round trip on the same plain client as the floor: a raw round trip whose
    //     server spawns `true` and answers at its exit. What the daemon adds per job (validation,
    //     the job record, the journal line, the output log, process tracking) over the wire and the fork.
    rows.push(
      pairRow(
        'shell ["true"] with wait, start→exit (plain ws) vs a raw round trip that spawns true',
        await samplePairs(
          400,
          40,
          () => plainRequest(ours, "shell", { command: ["true"], wait: 10_000 }),
          () => rawRun(rawWs),
        ),
        "≤ 1.15×",
        (r) => r <= 1.15,
      ),
    );

    if (latencyOnly) return rows;

    // 3. A finished 48 MiB job followed by a plain ws client vs the raw floor pumping 1 MiB frames
    //    (binary) or 64 KiB JSON job.output events, read by the same plain client.
    const { job: big } = await daemon.client.request("shell", { command: MAKE_OUTPUT, wait: 120_000 });
    const rawStream = (kind: string) => () =>
      readStream(
        rawWs,
        () => rawWs.send(`${kind}:${STREAM_BYTES}`),
        STREAM_BYTES,
        () => false,
        false,
      );
    const follow =
      (job: string, binary: boolean, live = false) =>
      async (): Promise<number> => {
        const t = performance.now();
        await readStream(
          ours,
          () => ours.send(JSON.stringify({ id: nextId++, action: "jobs.follow", job, binary })),
          STREAM_BYTES,
          (e) => e.event === "job.exit" && e.job === job,
          binary,
          live,
        );
        const ms = performance.now() - t;
        if (live) await plainRequest(ours, "jobs.unfollow", { job }); // the follower of a live job goes on
        return ms;
      };
    const followRow = (name: string, samples: { a: number[]; b: number[] }): BenchRow =>
      pairRow(name, samples, "≥ 0.8×", (r) => r >= 0.8, STREAM_MIB);
    rows.push(
      followRow(
        `binary jobs.follow, finished ${STREAM_MIB} MiB job (default cap) vs raw ws 1 MiB frames`,
        await samplePairs(FOLLOW_PAIRS, FOLLOW_WARMUP, follow(big.id, true), rawStream("binary")),
      ),
    );
    rows.push(
      followRow(
        `JSON jobs.follow, finished ${STREAM_MIB} MiB job (default cap) vs raw ws 64 KiB JSON job.output`,
        await samplePairs(FOLLOW_PAIRS, FOLLOW_WARMUP, follow(big.id, false), rawStream("json")),
      ),
    );

    // 4. The same for a job still running (its output written, the job asleep): the follower then
    //    waits for live bytes after the log's end instead of ending with job.exit. Its output was
    //    written while nobody watched, as the finished job's was (staged into 1 MiB writes).
    const { job: live } = await daemon.client.request("shell", { command: `${MAKE_OUTPUT}; exec sleep 600` });
    while ((await daemon.client.request("jobs.status", { job: live.id })).outputBytes < STREAM_BYTES)
      await new Promise((r) => setTimeout(r, 50));
    rows.push(
      followRow(
        `binary jobs.follow, running job (${STREAM_MIB} MiB so far, written unwatched) vs raw ws 1 MiB frames`,
        await samplePairs(FOLLOW_PAIRS, FOLLOW_WARMUP, follow(live.id, true, true), rawStream("binary")),
      ),
    );
    await daemon.client.request("jobs.cancel", { job: live.id, graceMs: 0 });

    // 4b. A running job whose output a follower watched as it was written: bytes a follower sees are
    //     written first, in the pipe's pieces (4–64 KiB), so the page cache holds them in small
    //     folios, which a later follower copies out more slowly. Reported, no goal.
    const { job: watched } = await daemon.client.request("shell", { command: `${MAKE_OUTPUT}; exec sleep 600` });
    await follow(watched.id, true, true)(); // follows as it is written; returns once all 48 MiB are in
    rows.push(
      pairRow(
        `binary jobs.follow, running job (${STREAM_MIB} MiB so far, written while a follower watched) vs raw ws 1 MiB frames`,
        await samplePairs(FOLLOW_PAIRS, FOLLOW_WARMUP, follow(watched.id, true, true), rawStream("binary")),
        "reported",
        () => undefined,
        STREAM_MIB,
      ),
    );
    await daemon.client.request("jobs.cancel", { job: watched.id, graceMs: 0 });

    // 5. The client library's follow (what CLI and agents use) against the same floor.
    rows.push(
      followRow(
        `client library job.follow() (binary), finished ${STREAM_MIB} MiB job vs raw ws 1 MiB frames`,
        await samplePairs(
          FOLLOW_PAIRS,
          FOLLOW_WARMUP,
          async () => {
            let got = 0;
            for await (const event of daemon.client.job(big.id).follow()) if (event.event === "job.output") got += event.bytes.length;
            if (got !== STREAM_BYTES) throw new Error(`follower got ${got} bytes`);
          },
          rawStream("binary"),
        ),
      ),
    );
    rows.push(await healthUnderFlood(daemon, rows[0]!.value));
    rawWs.close();
    ours.close();
  } finally {
    await daemon.stop();
    raw.stop();
  }
  rows.push(...(await memoryRows()));
  return rows;
}

/**
 * state.info p95 while a job floods its output to a follower (OpenHands' budget: p95 ≤ 50 ms); the
 * health checks share the flooded connection, as a client that follows and asks at once would.
 */
async function healthUnderFlood(daemon: BenchDaemon, idleMs: number): Promise<BenchRow> {
  const flood = await daemon.client.request("shell", { command: "yes 'flooding the log' | head -c 1073741824" });
  const flooded = await daemon.client.openConnection();
  const floodDone = new Promise<void>((resolve) => {
    const off = flooded.onEvent((event) => {
      if (event.job === flood.job.id && event.event === "job.exit") {
        off();
        resolve();
      }
    });
  });
  await flooded.request("jobs.follow", { job: flood.job.id, binary: true });
  const busy: number[] = [];
  for (let i = 0; i < 300; i++) {
    const t = performance.now();
    await flooded.request("state.info", {});
    busy.push(performance.now() - t);
  }
  await daemon.client.request("jobs.cancel", { job: flood.job.id, graceMs: 0 });
  await floodDone;
  await flooded.close();
  const p95 = quantile(busy, 0.95);
  return row("state.info p95 while a job floods a follower vs idle median", p95, idleMs, "ms", "p95 ≤ 50 ms", () => p95 <= 50);
}

const MB = 1024 * 1024;

/** Daemon RSS idle, after 1000 finished jobs, while 1 GiB streams to a reader that never reads, and under a pipelining client. */
async function memoryRows(): Promise<BenchRow[]> {
  const daemon = await startBenchDaemon();
  try {
    const settle = async (): Promise<number> => {
      const samples: number[] = [];
      for (let i = 0; i < 5; i++) {
        await daemon.client.request("state.info");
        samples.push(daemon.rssBytes());
        await new Promise((r) => setTimeout(r, 100));
      }
      return median(samples);
    };
    const idle = await settle();
    const rss = (name: string, value: number, goal: string, met: boolean): BenchRow => ({
      name,
      value: value / MB,
      baseline: idle / MB,
      ratio: value / idle,
      unit: "MB",
      goal,
      met,
    });
    const rows = [rss("daemon RSS idle (baseline: itself)", idle, "≤ 80 MB", idle <= 80 * MB)];

    // A follower whose socket never reads: the daemon must not buffer the job's output for it.
    const stalled = await openPlain(daemon.url, daemon.token);
    (stalled as unknown as { _socket: { pause(): void } })._socket.pause();
    const { job } = await daemon.client.request("shell", { command: `head -c ${1024 * MB} /dev/zero | tr '\\0' 'b'` });
    stalled.send(JSON.stringify({ id: 1, action: "jobs.follow", job: job.id, binary: true }));
    let low = Infinity;
    let high = 0;
    for (;;) {
      const now = daemon.rssBytes();
      low = Math.min(low, now);
      high = Math.max(high, now);
      const status = await daemon.client.request("jobs.status", { job: job.id });
      if (status.state !== "running") break;
      await new Promise((r) => setTimeout(r, 50));
    }
    stalled.terminate();
    const flat = (v: number): boolean => Math.abs(v - idle) <= 20 * MB;
    rows.push(
      rss("daemon RSS peak streaming 1 GiB to a follower that never reads vs idle", high, "within ±20 MB", flat(high) && flat(low)),
    );

    for (let i = 0; i < 1000; i += 50) {
      await Promise.all(Array.from({ length: 50 }, () => daemon.client.request("shell", { command: ["true"], wait: 30_000 })));
    }
    const afterJobs = await settle();
    rows.push(rss("daemon RSS after 1000 finished jobs vs idle", afterJobs, "within +20 MB", afterJobs - idle <= 20 * MB));
    const pipelined = await peakUnderPipeliningClient(daemon);
    rows.push(
      rss(
        `daemon RSS under a non-reading client pipelining ${PIPELINED_REQUESTS} jobs.output (1 MiB) vs idle`,
        pipelined,
        "within +50 MiB",
        pipelined - idle <= 50 * MB,
      ),
    );
    return rows;
  } finally {
    await daemon.stop();
  }
}

const PIPELINED_REQUESTS = 300;

/**
 * Peak RSS while a client sends 300 `jobs.output` requests (1 MiB replies each) and never reads
 * (the attack of issue 10.3): sampled for 3 s after the last request was sent, then the client
 * reads everything, so the daemon is idle again for the next row.
 */
async function peakUnderPipeliningClient(daemon: BenchDaemon): Promise<number> {
  const { job } = await daemon.client.request("shell", { command: "yes hotline | head -c 67108864", wait: 60_000 });
  const ws = new WebSocket(daemon.url, { headers: { authorization: `Bearer ${daemon.token}` }, perMessageDeflate: false });
  await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
  const socket = (ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
  socket.pause();
  let replies = 0;
  const allRead = new Promise<void>((resolve) => ws.on("message", () => ++replies === PIPELINED_REQUESTS && resolve()));
  for (let i = 0; i < PIPELINED_REQUESTS; i++)
    ws.send(JSON.stringify({ id: i, action: "jobs.output", job: job.id, from: (i % 64) * 1024 * 1024 }));
  let peak = 0;
  for (let t = 0; t < 60; t++) {
    peak = Math.max(peak, daemon.rssBytes());
    await new Promise((r) => setTimeout(r, 50));
  }
  socket.resume();
  await allRead;
  ws.close();
  return peak;
}
