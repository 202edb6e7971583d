import { Agent, request } from "node:http";

/**
 * A load generator in a process of its own (so the bench's own loop is not the bottleneck):
 * `node http-load.js PORT HOST-HEADER CLIENTS MS [HEADER=VALUE]` keeps CLIENTS keep-alive
 * connections busy with GET /small for MS and prints the requests completed.
 */
const [port, host, clients, ms, extra] = process.argv.slice(2);
const headers: Record<string, string> = { Host: host! };
if (extra) headers[extra.slice(0, extra.indexOf("="))] = extra.slice(extra.indexOf("=") + 1);
const agent = new Agent({ keepAlive: true, maxSockets: Number(clients) });
const deadline = Date.now() + Number(ms);
let done = 0;
let failed = 0;

function one(): Promise<void> {
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port: Number(port), path: "/small", agent, headers }, (res) => {
      if (res.statusCode !== 200) failed++;
      res.resume();
      res.on("end", () => {
        done++;
        resolve();
      });
    });
    req.on("error", () => {
      failed++;
      resolve();
    });
    req.end();
  });
}

async function client(): Promise<void> {
  while (Date.now() < deadline) await one();
}

const started = Date.now();
await Promise.all(Array.from({ length: Number(clients) }, client));
process.stdout.write(`${JSON.stringify({ requests: done, failed, ms: Date.now() - started })}\n`);
agent.destroy();
