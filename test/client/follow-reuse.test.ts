import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect, type HotlineClient } from "../../client/index.js";
import { CuttingProxy } from "../helpers/cutting-proxy.js";
import { useDaemon } from "../helpers/daemon.js";

const ROOT = new URL("../../", import.meta.url).pathname;
const MIB = 1024 * 1024;

/** Follows a job to its job.exit; checks that every byte from `from` arrived exactly once, in order. */
async function followAll(client: HotlineClient, job: string, from = 0): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let next = from;
  let exited = false;
  for await (const event of client.job(job).follow({ from })) {
    if (event.event === "job.output") {
      expect(event.offset).toBe(next);
      chunks.push(Buffer.from(event.bytes));
      next += event.bytes.length;
    } else if (event.event === "job.exit") {
      expect(event.next).toBe(next);
      exited = true;
    }
  }
  expect(exited).toBe(true);
  return Buffer.concat(chunks);
}

/** What keeps this process alive (an unref'd socket is not among it). */
function activeResources(): string[] {
  return process
    .getActiveResourcesInfo()
    .filter((r) => r !== "TTYWrap")
    .sort();
}

/**
 * The resources once what was closing has closed: a socket closed a moment ago still holds its
 * close timer for a few turns, so the list is read until it stays the same (or for 5 s).
 */
async function settledResources(): Promise<string[]> {
  let last = activeResources();
  for (let same = 0, i = 0; same < 3 && i < 100; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const now = activeResources();
    same = JSON.stringify(now) === JSON.stringify(last) ? same + 1 : 0;
    last = now;
  }
  return last;
}

/**
 * Waits (up to 10 s) for the process to hold exactly `expected`: a timer being cleared is not a
 * leak, one that stays is. (Not expect.poll: its own timers would be among what it counts.)
 */
async function expectResources(expected: string[]): Promise<void> {
  for (let i = 0; i < 200 && JSON.stringify(activeResources()) !== JSON.stringify(expected); i++)
    await new Promise((resolve) => setTimeout(resolve, 50));
  expect(activeResources()).toEqual(expected);
}

describe("job.follow() connection reuse", () => {
  const ctx = useDaemon();

  /** Finished jobs with random output; the daemon's own client starts them, so only follows go through a proxy. */
  async function finishedJobs(...sizes: number[]): Promise<Array<{ id: string; output: Buffer }>> {
    const client = await connect({ url: ctx.daemon.url, token: ctx.daemon.token });
    try {
      return await Promise.all(
        sizes.map(async (size) => {
          const { job } = await client.shell(`head -c ${size} /dev/urandom`, { wait: 60_000 });
          expect((await job.wait()).state).toBe("succeeded");
          return { id: job.id, output: await job.output() };
        }),
      );
    } finally {
      await client.close();
    }
  }

  /** A lazy client whose every connection goes through a proxy that counts them. */
  async function proxiedClient(): Promise<{ client: HotlineClient; proxy: CuttingProxy }> {
    const proxy = await CuttingProxy.start(ctx.daemon.url);
    const client = await connect({ url: proxy.url, token: ctx.daemon.token, lazy: true });
    return { client, proxy };
  }

  it("runs two consecutive follows of finished jobs on one connection", async () => {
    const [a, b] = await finishedJobs(3 * MIB, 100);
    const { client, proxy } = await proxiedClient();
    try {
      expect((await followAll(client, a!.id)).equals(a!.output)).toBe(true);
      expect((await followAll(client, b!.id)).equals(b!.output)).toBe(true);
      expect(proxy.accepted).toBe(1);
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  it("does not hand the connection of a follow stopped early to the next follow", async () => {
    const [big] = await finishedJobs(16 * MIB);
    const { client, proxy } = await proxiedClient();
    try {
      // Stopped after the first chunk: the daemon is still sending the rest on that connection.
      const stopped = client.job(big!.id).follow();
      for await (const event of stopped) if (event.event === "job.output") break;
      const from = 5 * MIB + 7;
      const rest = await followAll(client, big!.id, from);
      expect(rest.equals(big!.output.subarray(from))).toBe(true);
      expect(proxy.accepted).toBe(2);
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  it("opens a new connection when the daemon closed the idle one", async () => {
    const [a, b] = await finishedJobs(MIB, MIB);
    const { client, proxy } = await proxiedClient();
    try {
      expect((await followAll(client, a!.id)).equals(a!.output)).toBe(true);
      proxy.cut(); // closes the idle connection from the daemon's side
      await proxy.drained();
      expect((await followAll(client, b!.id)).equals(b!.output)).toBe(true);
      expect(proxy.accepted).toBe(2);
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  it("keeps at most two idle connections, and close() closes them", async () => {
    const jobs = await finishedJobs(MIB, MIB, MIB);
    const { client, proxy } = await proxiedClient();
    try {
      const followAllAtOnce = async (): Promise<void> => {
        const outputs = await Promise.all(jobs.map((job) => followAll(client, job.id)));
        outputs.forEach((output, i) => expect(output.equals(jobs[i]!.output)).toBe(true));
      };
      await followAllAtOnce();
      expect(proxy.accepted).toBe(3);
      await followAllAtOnce(); // on the two idle connections and a new one: the third was closed
      expect(proxy.accepted).toBe(4);
      await client.close();
      await proxy.drained(); // the idle connections were closed too
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  it("idle connections keep nothing alive in the process; close() leaves no socket or timer", async () => {
    const jobs = await finishedJobs(MIB, 10);
    const before = await settledResources();
    const client = await connect({ url: ctx.daemon.url, token: ctx.daemon.token, lazy: true });
    try {
      await Promise.all(jobs.map((job) => followAll(client, job.id)));
      await expectResources(before); // both connections are idle now, and unref'd
      expect((await followAll(client, jobs[0]!.id)).equals(jobs[0]!.output)).toBe(true); // one taken, ref'd, idle again
    } finally {
      await client.close();
    }
    await expectResources(before);
  });

  it("lets a script that never calls close() exit by itself after its follows", async () => {
    const [a, b] = await finishedJobs(2 * MIB, 10);
    const script = join(ctx.daemon.dirs.root, "follow-and-leave.mjs");
    writeFileSync(
      script,
      `import { connect } from ${JSON.stringify(join(ROOT, "dist/client/index.js"))};
const client = await connect({ url: process.argv[2], token: process.argv[3], lazy: true });
let bytes = 0;
for (const job of process.argv.slice(4))
  for await (const event of client.job(job).follow()) if (event.event === "job.output") bytes += event.bytes.length;
console.log(bytes);
`,
    );
    // The idle connection is still open when the script's last line has run: only its unref lets node exit.
    const run = spawnSync(process.execPath, [script, ctx.daemon.url, ctx.daemon.token, a!.id, b!.id], {
      encoding: "utf8",
      timeout: 15_000,
    });
    expect(run.stderr).toBe("");
    expect({ status: run.status, signal: run.signal }).toEqual({ status: 0, signal: null });
    expect(run.stdout.trim()).toBe(String(2 * MIB + 10));
  });
});
