import { execFile, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { type BenchRow, pairRow, samplePairs, startBenchDaemon } from "./common.js";

const run = promisify(execFile);

/** Text in many colours over the whole screen: a screen that compresses like a busy desktop, not like a flat colour. */
const BUSY_SCREEN = `
import tkinter as tk, random
r = tk.Tk(); r.overrideredirect(True); r.geometry("1600x900+0+0")
c = tk.Canvas(r, width=1600, height=900, highlightthickness=0, background="white"); c.pack()
random.seed(1)
for y in range(0, 900, 18):
    for x in range(0, 1600, 200):
        c.create_text(x + 4, y + 2, anchor="nw", text="".join(random.choice("abcdefghij klmnop{}();=") for _ in range(28)),
                      fill="#%02x%02x%02x" % (random.randrange(160), random.randrange(160), random.randrange(160)))
r.after(200, lambda: print("ready", flush=True))
r.mainloop()
`;

/**
 * The desktop rows: a 1600×900 PNG screenshot through the daemon (xwd + worker-thread encoding)
 * against ImageMagick's `import -window root png:-` of the same screen, in interleaved pairs; and
 * an input step's round trip (desktop.act mouse_move) against state.info's.
 */
export async function desktopBenchmarks(): Promise<BenchRow[]> {
  const x = spawn(
    "Xvnc",
    [
      "-displayfd",
      "3",
      "-geometry",
      "1600x900",
      "-depth",
      "24",
      "-SecurityTypes",
      "None",
      "-localhost",
      "-nolisten",
      "tcp",
      "-rfbport",
      "0",
    ],
    {
      stdio: ["ignore", "ignore", "ignore", "pipe"],
    },
  );
  const display = `:${await new Promise<string>((resolve) => createInterface({ input: x.stdio[3] as NodeJS.ReadableStream }).once("line", (l) => resolve(l.trim())))}`;
  const env = { ...process.env, DISPLAY: display };
  const screen = spawn("python3", ["-c", BUSY_SCREEN], { env, stdio: ["ignore", "pipe", "ignore"] });
  await new Promise((resolve) => createInterface({ input: screen.stdout! }).once("line", resolve));
  const daemon = await startBenchDaemon({}, ["--display", display]);
  try {
    const shot = await samplePairs(
      15,
      3,
      () => daemon.client.request("desktop.screenshot", {}),
      () => run("import", ["-window", "root", "png:-"], { env, encoding: "buffer", maxBuffer: 64 * 1024 * 1024 }),
    );
    const shotRow = pairRow("desktop.screenshot 1600x900 PNG vs import -window root png:-", shot, "p50 ≤ 150 ms", () => undefined);
    shotRow.met = shotRow.value <= 150;
    let i = 0;
    const act = await samplePairs(
      40,
      5,
      () =>
        daemon.client.request("desktop.act", {
          do: "mouse_move",
          coordinate: [100 + (i++ % 50), 100],
          scaledTo: { width: 1600, height: 900 },
        }),
      () => daemon.client.request("state.info"),
    );
    const actRow = pairRow("desktop.act mouse_move round trip vs state.info", act, "p50 ≤ 30 ms", () => undefined);
    actRow.met = actRow.value <= 30;
    return [shotRow, actRow];
  } finally {
    await daemon.stop();
    screen.kill("SIGKILL");
    x.kill("SIGTERM");
  }
}
