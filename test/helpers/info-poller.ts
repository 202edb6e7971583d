import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/** What the poller saw: its state.info round trips in ms, sorted. */
export interface InfoPoll {
  samples: number[];
  worstMs: number;
}

// Plain JavaScript run by the worker (eval): a client of its own, so the test's work never delays its replies.
const POLLER = `
const { parentPort, workerData } = require("node:worker_threads");
const WebSocket = require(workerData.ws);
const ws = new WebSocket(workerData.url, { headers: { authorization: "Bearer " + workerData.token } });
const samples = [];
let id = 0, sentAt = 0, stopping = false;
const send = () => {
  if (stopping) return ws.close();
  sentAt = performance.now();
  ws.send(JSON.stringify({ id: ++id, action: "state.info" }));
};
ws.on("open", send);
ws.on("message", (data) => {
  const frame = JSON.parse(String(data));
  if (frame.id !== id) return;
  samples.push(performance.now() - sentAt);
  setTimeout(send, workerData.everyMs);
});
ws.on("close", () => parentPort.postMessage({ samples }));
ws.on("error", (err) => parentPort.postMessage({ error: String(err) }));
parentPort.on("message", () => { stopping = true; });
`;

/**
 * Sends state.info every `everyMs` from a worker thread with its own connection and event loop,
 * until `stop()`: the round trips are the daemon's answer time, not the test process's (a test
 * that spawns hundreds of clients blocks its own loop in each spawn, and a poller on it measures that).
 */
export function pollInfoInWorker(url: string, token: string, everyMs = 20): { stop(): Promise<InfoPoll> } {
  const ws = createRequire(import.meta.url).resolve("ws");
  const worker = new Worker(POLLER, { eval: true, workerData: { url, token, ws, everyMs } });
  const result = new Promise<InfoPoll>((resolve, reject) => {
    worker.once("message", (m: { samples?: number[]; error?: string }) => {
      void worker.terminate();
      if (m.error) return reject(new Error(`state.info poller: ${m.error}`));
      const samples = m.samples!.sort((a, b) => a - b);
      resolve({ samples, worstMs: samples.at(-1) ?? 0 });
    });
    worker.once("error", reject);
  });
  return {
    stop: async () => {
      worker.postMessage("stop");
      return result;
    },
  };
}
