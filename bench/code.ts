import { type BenchRow, median, pairRow, row, samplePairs, startBenchDaemon } from "./common.js";
import { BareDriver, bareStart, type Language } from "./code-floor.js";

const ROUND_TRIPS = 400;
const WARMUP = 20;
const STARTS = 15;
const IDLE_CONTEXTS = 10;

/**
 * `npm run bench code`: code.run of `1+1` through the daemon (WebSocket, job, driver, result)
 * against the same driver fed over its pipes by a bare script (bench/code-floor.ts), in interleaved
 * pairs; a new context's start against the bare interpreter's start; an idle context's memory, and
 * what it costs the daemon, against the bare driver's.
 */
export async function codeBenchmarks(): Promise<BenchRow[]> {
  const daemon = await startBenchDaemon({}, ["--ssh", "off"]);
  const rows: BenchRow[] = [];
  try {
    for (const language of ["python", "javascript"] as Language[]) {
      const { driver } = await BareDriver.start(language);
      try {
        const { context } = await daemon.client.request("code.context.create", { language });
        const run = async (): Promise<void> => {
          const reply = await daemon.client.request("code.run", { code: "1+1", context: context.id, wait: 30_000 });
          if (reply.result?.status !== "ok") throw new Error(`code.run failed: ${JSON.stringify(reply)}`);
        };
        const samples = await samplePairs(ROUND_TRIPS, WARMUP, run, () => driver.roundTrip("1+1"));
        rows.push(pairRow(`code.run 1+1 round trip (${language}) vs the same driver fed over a pipe`, samples, "≤ 1.3×", (r) => r <= 1.3));
        // What any action costs on this machine (a state.info round trip) plus the driver's own 1+1: the part code.run adds is the rest.
        const floor = async (): Promise<void> => {
          await daemon.client.request("state.info", {});
          await driver.roundTrip("1+1");
        };
        const beside = await samplePairs(ROUND_TRIPS / 2, WARMUP, run, floor);
        rows.push(
          pairRow(`code.run 1+1 (${language}) vs a state.info round trip + the driver's 1+1`, beside, "(reported)", () => undefined),
        );
        await daemon.client.request("code.context.remove", { context: context.id });
      } finally {
        await driver.stop();
      }

      const starts = await samplePairs(
        STARTS,
        2,
        async () => {
          const t = performance.now();
          const { context } = await daemon.client.request("code.context.create", { language });
          const took = performance.now() - t;
          await daemon.client.request("code.context.remove", { context: context.id });
          return took;
        },
        () => bareStart(language),
      );
      const bare = language === "python" ? "python3 -c pass" : "node -e 0";
      rows.push(pairRow(`code.context.create (${language}) to ready vs ${bare}`, starts, "(reported)", () => undefined));

      rows.push(...(await idleMemory(daemon, language)));
    }
  } finally {
    await daemon.stop();
  }
  return rows;
}

/** The resident memory of idle contexts (their interpreters) and the daemon's own growth per context, vs a bare idle driver. */
async function idleMemory(daemon: Awaited<ReturnType<typeof startBenchDaemon>>, language: Language): Promise<BenchRow[]> {
  const { driver } = await BareDriver.start(language);
  await driver.roundTrip("1+1");
  const bareKiB = driver.rssKiB();
  await driver.stop();
  const before = daemon.rssBytes();
  const ids: string[] = [];
  for (let i = 0; i < IDLE_CONTEXTS; i++) {
    const { context } = await daemon.client.request("code.context.create", { language });
    await daemon.client.request("code.run", { code: "1+1", context: context.id, wait: 30_000 });
    ids.push(context.id);
  }
  const after = daemon.rssBytes();
  const { contexts } = await daemon.client.request("code.context.list", {});
  const idle = median(contexts.filter((c) => ids.includes(c.id)).map((c) => (c.memoryBytes ?? 0) / 1024));
  for (const context of ids) await daemon.client.request("code.context.remove", { context });
  const MiB = (kib: number): number => kib / 1024;
  return [
    row(`idle context's interpreter RSS (${language}) vs the bare idle driver`, MiB(idle), MiB(bareKiB), "MiB", "(reported)", () => true),
    row(
      `daemon RSS per idle context (${language}, ${IDLE_CONTEXTS} contexts) vs the bare idle driver`,
      MiB((after - before) / 1024 / IDLE_CONTEXTS),
      MiB(bareKiB),
      "MiB",
      "(reported)",
      () => true,
    ),
  ].map((r) => ({ ...r, met: undefined }));
}
