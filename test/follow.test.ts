import { describe, expect, it } from "vitest";
import { createHash, randomInt } from "node:crypto";
import { execFileSync } from "node:child_process";
import { TestDaemon, useDaemon, type Frame } from "./helpers/daemon.js";

const BIG = 20 * 1024 * 1024;
const COMMAND = `seq 1 3000000 | head -c ${BIG}`;

/** Bytes of contiguous job.output events; fails on a gap or an overlap. */
function contiguous(frames: Frame[], job: string, from: number): { bytes: Buffer; next: number } {
  let next = from;
  const parts: Buffer[] = [];
  for (const f of frames) {
    if (f.event !== "job.output" || f.job !== job) continue;
    if (f.offset !== next) throw new Error(`gap or overlap: expected offset ${next}, got ${f.offset}`);
    const data = Buffer.from(f.data, f.encoding === "base64" ? "base64" : "utf8");
    parts.push(data);
    next += data.length;
  }
  return { bytes: Buffer.concat(parts), next };
}

describe("following output", () => {
  const t = useDaemon();

  it("a follower that disconnects at a random offset and resumes with from gets every byte exactly once", async () => {
    const expected = execFileSync("bash", ["-c", COMMAND], { maxBuffer: BIG * 2 });
    expect(expected.length).toBe(BIG);
    const { job } = await t.client.ok("shell", { command: COMMAND });

    const first = await t.daemon.client();
    const cut = randomInt(1, BIG - 1);
    await first.ok("jobs.follow", { job: job.id });
    await first.waitFor(() => contiguous(first.frames, job.id, 0).next >= cut, 60_000, `${cut} bytes`);
    first.ws.terminate(); // an abrupt drop, not a polite close
    const part1 = contiguous(first.frames, job.id, 0);

    const second = await t.daemon.client();
    const resumed = await second.ok("jobs.follow", { job: job.id, from: part1.next });
    expect(resumed.from).toBe(part1.next);
    const exit = await second.waitForExit(job.id, 60_000);
    const part2 = contiguous(second.frames, job.id, part1.next);
    expect(part2.next).toBe(exit.next);

    const all = Buffer.concat([part1.bytes, part2.bytes]);
    expect(all.length).toBe(BIG);
    expect(createHash("sha256").update(all).digest("hex")).toBe(createHash("sha256").update(expected).digest("hex"));
    expect(exit.status.outputBytes).toBe(BIG);
    await second.close();
  });

  it("a stalled follower neither slows the job nor loses bytes once it reads again", async () => {
    const size = 64 * 1024 * 1024;
    const command = `seq 1 9000000 | head -c ${size}`;
    const viewer = await t.daemon.client();
    const { job } = await t.client.ok("shell", { command });
    await viewer.ok("jobs.follow", { job: job.id, binary: true });
    const socket = (viewer.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    socket.pause();
    // The job runs to the end while its only follower reads nothing.
    const { job: final } = await t.client.ok("jobs.wait", { job: job.id, timeoutMs: 60_000 });
    expect(final.state).toBe("succeeded");
    expect(final.outputBytes).toBe(size);
    socket.resume();
    const exit = await viewer.waitForExit(job.id, 60_000);
    expect(exit.next).toBe(size);
    const expected = execFileSync("bash", ["-c", command], { maxBuffer: size * 2 });
    expect(createHash("sha256").update(viewer.outputOf(job.id)).digest("hex")).toBe(createHash("sha256").update(expected).digest("hex"));
    await viewer.close();
  });

  it("streams raw bytes in binary frames when asked, with the same offsets", async () => {
    const { job } = await t.client.ok("shell", { command: "printf 'text\\n'; printf '\\xff\\x00\\x01' >&2; printf 'more'", wait: 10_000 });
    const viewer = await t.daemon.client();
    await viewer.ok("jobs.follow", { job: job.id, binary: true });
    const exit = await viewer.waitForExit(job.id);
    const frames = viewer.frames.filter((f) => f.event === "job.output");
    expect(frames.every((f) => Buffer.isBuffer(f.bytes) && f.data === undefined)).toBe(true);
    // Offsets are contiguous; the two pipes interleave in arrival order, each keeping its own bytes.
    let next = 0;
    for (const f of frames) {
      expect(f.offset).toBe(next);
      next += f.bytes.length;
    }
    expect(exit.next).toBe(12);
    expect(viewer.outputOf(job.id, "stdout")).toEqual(Buffer.from("text\nmore"));
    expect(viewer.outputOf(job.id, "stderr")).toEqual(Buffer.from([0xff, 0, 1]));
    await viewer.close();
  });

  it("reads output by offset with jobs.output and reports eof", async () => {
    const { job } = await t.client.ok("shell", { command: "printf 'abcdefghij'", wait: 10_000 });
    const a = await t.client.ok("jobs.output", { job: job.id, from: 0, limit: 4 });
    expect(a).toMatchObject({ data: "abcd", from: 0, next: 4, eof: false });
    const b = await t.client.ok("jobs.output", { job: job.id, from: a.next });
    expect(b).toMatchObject({ data: "efghij", from: 4, next: 10, eof: true });
  });

  it("never splits a UTF-8 character across reads", async () => {
    const { job } = await t.client.ok("shell", { command: "printf 'aé€'", wait: 10_000 });
    const a = await t.client.ok("jobs.output", { job: job.id, from: 0, limit: 2 });
    expect(a).toMatchObject({ data: "a", encoding: "utf8", next: 1 });
    const b = await t.client.ok("jobs.output", { job: job.id, from: 1, limit: 4 });
    expect(b).toMatchObject({ data: "é", encoding: "utf8", next: 3 });
  });

  it("JSON events carry quotes, backslashes, every control byte and multi-byte text exactly, in frames of at most 64 KiB", async () => {
    // Every byte JSON escapes, text of 1..4-byte characters, and plain text (so that the frame is
    // escaped from bytes, not by the fallback for text that more than doubles), past one 64 KiB frame.
    const line = `${"plain text ".repeat(20)}${Array.from({ length: 32 }, (_, b) => `\\${b.toString(8).padStart(3, "0")}`).join("")}"\\\\ a\\177 é 漢字 😀\\n`;
    const command = `for i in $(seq 1 2000); do printf '${line}'; done`;
    const expected = execFileSync("bash", ["-c", command]);
    const { job } = await t.client.ok("shell", { command, wait: 30_000 });
    const viewer = await t.daemon.client();
    await viewer.ok("jobs.follow", { job: job.id });
    const exit = await viewer.waitForExit(job.id, 30_000);
    const output = viewer.frames.filter((f) => f.event === "job.output" && f.job === job.id);
    expect(output.length).toBeGreaterThan(1);
    for (const f of output) expect(Buffer.from(f.data, "utf8").length).toBeLessThanOrEqual(64 * 1024);
    expect(output.every((f) => f.encoding === "utf8")).toBe(true);
    const got = contiguous(viewer.frames, job.id, 0);
    expect(got.next).toBe(exit.next);
    expect(got.bytes.equals(expected)).toBe(true);
    await viewer.close();
  });

  it("unfollow stops the events", async () => {
    const { job } = await t.client.ok("shell", { command: "echo a; read x; echo b", stdin: true });
    const viewer = await t.daemon.client();
    await viewer.ok("jobs.follow", { job: job.id });
    await viewer.waitFor((f) => f.event === "job.output" && f.job === job.id);
    expect((await viewer.ok("jobs.unfollow", { job: job.id })).followed).toBe(true);
    await t.client.ok("jobs.input", { job: job.id, data: "\n", eof: true });
    await t.client.ok("jobs.wait", { job: job.id, timeoutMs: 10_000 });
    await viewer.ok("state.info"); // anything the daemon sent before this reply has arrived
    expect(viewer.frames.some((f) => f.event === "job.exit")).toBe(false);
    await viewer.close();
  });

  it("sends job.state and job.exit to followers, in order after the output", async () => {
    const { job } = await t.client.ok("shell", { command: "read x; echo end", stdin: true });
    const viewer = await t.daemon.client();
    await viewer.ok("jobs.follow", { job: job.id });
    await t.client.ok("jobs.input", { job: job.id, data: "\n", eof: true });
    const exit = await viewer.waitForExit(job.id);
    const kinds = viewer.frames.filter((f) => f.job === job.id).map((f) => f.event);
    expect(kinds.indexOf("job.output")).toBeLessThan(kinds.indexOf("job.exit"));
    expect(kinds).toContain("job.state");
    expect(exit.status.state).toBe("succeeded");
    await viewer.close();
  });
});

describe("many clients", () => {
  it("50 clients × 20 short jobs all complete with the right output", async () => {
    const daemon = await TestDaemon.start();
    try {
      const clients = await Promise.all(Array.from({ length: 50 }, () => daemon.client()));
      await Promise.all(
        clients.map(async (c, ci) => {
          const replies = await Promise.all(
            Array.from({ length: 20 }, (_, ji) => c.ok("shell", { command: ["echo", `c${ci}-j${ji}`], wait: 60_000 }, 120_000)),
          );
          replies.forEach((r, ji) => {
            expect(r.job.state).toBe("succeeded");
            expect(r.output.data).toBe(`c${ci}-j${ji}\n`);
          });
        }),
      );
      await Promise.all(clients.map((c) => c.close()));
    } finally {
      await daemon.stop();
      daemon.cleanup();
    }
  }, 120_000);
});
