import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI_MAIN, TestDaemon, withDaemon, type TestClient } from "../helpers/daemon.js";
import { desktopToolsAvailable, Recorder, XServer } from "../helpers/x-server.js";

const hasDesktop = desktopToolsAvailable();

/** Decodes an image with ImageMagick (not the daemon's own code) into its pixels. */
function pixels(image: Buffer): { width: number; height: number; at(x: number, y: number): [number, number, number] } {
  const size = execFileSync("convert", ["-", "-format", "%w %h", "info:"], { input: image }).toString().trim().split(" ").map(Number);
  const rgb = execFileSync("convert", ["-", "-depth", "8", "rgb:-"], { input: image, maxBuffer: 64 * 1024 * 1024 });
  const [width, height] = size as [number, number];
  return {
    width,
    height,
    at: (x, y) => {
      const i = (y * width + x) * 3;
      return [rgb[i]!, rgb[i + 1]!, rgb[i + 2]!];
    },
  };
}

/** The recorder window: its button is the top half, its text entry the bottom half. */
const WINDOW = { x: 200, y: 160, width: 400, height: 320 };
const BUTTON_CENTRE = { x: WINDOW.x + WINDOW.width / 2, y: WINDOW.y + WINDOW.height / 4 };
const ENTRY_CENTRE = { x: WINDOW.x + WINDOW.width / 2, y: WINDOW.y + (WINDOW.height * 3) / 4 };

describe.skipIf(!hasDesktop)("the desktop on a real X server", () => {
  let x: XServer;
  let daemon: TestDaemon;
  let client: TestClient;
  let recorder: Recorder;

  beforeAll(async () => {
    x = await XServer.start(1600, 900);
    daemon = await TestDaemon.start({ args: ["--display", x.display] });
    client = await daemon.client();
    recorder = await Recorder.start(x, join(daemon.dirs.root, "events.jsonl"), WINDOW, "#ff0000");
  });

  afterAll(async () => {
    recorder?.stop();
    await client?.close();
    await daemon?.stop();
    daemon?.cleanup();
    await x?.stop();
  });

  it("state.info names the display and its size", async () => {
    const info = await client.ok("state.info");
    expect(info.desktop).toEqual({ available: true, display: x.display, width: 1600, height: 900 });
  });

  it("a screenshot shows the red window where it is, on the grey root", async () => {
    const shot = await client.ok("desktop.screenshot");
    expect(shot).toMatchObject({ format: "png", width: 1600, height: 900, scale: 1, screen: { width: 1600, height: 900 } });
    const image = Buffer.from(shot.data, "base64");
    expect(shot.bytes).toBe(image.length);
    const p = pixels(image);
    expect([p.width, p.height]).toEqual([1600, 900]);
    expect(p.at(BUTTON_CENTRE.x, BUTTON_CENTRE.y)).toEqual([255, 0, 0]);
    expect(p.at(WINDOW.x + 2, WINDOW.y + 2)).toEqual([255, 0, 0]);
    expect(p.at(WINDOW.x - 3, WINDOW.y - 3)).toEqual([0x20, 0x20, 0x20]);
    expect(p.at(WINDOW.x + WINDOW.width + 3, WINDOW.y + 10)).toEqual([0x20, 0x20, 0x20]);
  });

  it("scaled to fit 800 wide, the screenshot reports scale 0.5 and shows the window at half its coordinates", async () => {
    const shot = await client.ok("desktop.screenshot", { maxWidth: 800, maxHeight: 800 });
    expect(shot).toMatchObject({ width: 800, height: 450, scale: 0.5, screen: { width: 1600, height: 900 } });
    const p = pixels(Buffer.from(shot.data, "base64"));
    expect(p.at(BUTTON_CENTRE.x / 2, BUTTON_CENTRE.y / 2)).toEqual([255, 0, 0]);
    expect(p.at(WINDOW.x / 2 - 3, WINDOW.y / 2 - 3)).toEqual([0x20, 0x20, 0x20]);
  });

  it("a region, JPEG, and a binary frame", async () => {
    const region = { x: WINDOW.x, y: WINDOW.y, width: 200, height: 100 };
    const shot = await client.ok("desktop.screenshot", { region, format: "jpeg", quality: 90, binary: true });
    expect(shot).toMatchObject({ format: "jpeg", width: 200, height: 100, region, data: "" });
    const frame = await client.waitFor((f) => f.event === "desktop.image", 10_000, "the image frame");
    const image = frame.bytes as Buffer;
    expect(image.length).toBe(shot.bytes);
    expect(image.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    const [r, g, b] = pixels(image).at(100, 50);
    expect(r).toBeGreaterThan(230);
    expect(g + b).toBeLessThan(40);
    const outside = await client.call("desktop.screenshot", { region: { x: 1500, y: 0, width: 200, height: 100 } });
    expect(outside.error).toMatchObject({ code: "invalid_request", path: "/region" });
  });

  it("left_click at the button's coordinates in a 50%-scaled screenshot's space lands on the button", async () => {
    await client.ok("desktop.screenshot", { maxWidth: 800 });
    const before = recorder.events().length;
    const reply = await client.ok("desktop.act", { do: "left_click", coordinate: [BUTTON_CENTRE.x / 2, BUTTON_CENTRE.y / 2] });
    expect(reply).toEqual({ done: "left_click" });
    await recorder.waitFor((e) => e.event === "button", "the button's press");
    const click = recorder
      .events()
      .slice(before)
      .find((e) => e.event === "click")!;
    expect(Math.abs((click.x as number) - BUTTON_CENTRE.x)).toBeLessThanOrEqual(1);
    expect(Math.abs((click.y as number) - BUTTON_CENTRE.y)).toBeLessThanOrEqual(1);
    const pointer = await client.ok("desktop.act", { do: "cursor_position" });
    expect(pointer.coordinate).toEqual([BUTTON_CENTRE.x / 2, BUTTON_CENTRE.y / 2]);
    const outside = await client.call("desktop.act", { do: "left_click", coordinate: [800, 10] });
    expect(outside.error).toMatchObject({ code: "invalid_request", path: "/coordinate" });
  });

  it("type of non-ASCII text arrives exactly, under a US and under a German layout", async () => {
    const text = "héllo wörld ✓ $HOME";
    await client.ok("desktop.act", {
      do: "left_click",
      coordinate: [ENTRY_CENTRE.x, ENTRY_CENTRE.y],
      scaledTo: { width: 1600, height: 900 },
    });
    await client.ok("desktop.act", { do: "type", text });
    await recorder.waitFor((e) => e.event === "text" && e.value === text, `the entry to read ${text}`);
    execFileSync("setxkbmap", ["-layout", "de"], { env: x.env });
    try {
      await client.ok("desktop.act", { do: "type", text: " yz€@" });
      await recorder.waitFor((e) => e.event === "text" && e.value === `${text} yz€@`, "the text typed under the German layout");
    } finally {
      execFileSync("setxkbmap", ["-layout", "us"], { env: x.env });
    }
  });

  it("key ctrl+a and scroll are recorded; an unknown key name is refused", async () => {
    const ctrlA = recorder.events().filter((e) => e.event === "ctrl+a").length;
    await client.ok("desktop.act", { do: "key", text: "ctrl+a" });
    await recorder.waitFor(() => recorder.events().filter((e) => e.event === "ctrl+a").length > ctrlA, "ctrl+a");
    const downs = () => recorder.events().filter((e) => e.event === "scroll" && e.direction === "down").length;
    const before = downs();
    await client.ok("desktop.act", {
      do: "scroll",
      coordinate: [ENTRY_CENTRE.x, ENTRY_CENTRE.y],
      scaledTo: { width: 1600, height: 900 },
      scrollDirection: "down",
      scrollAmount: 2,
    });
    await recorder.waitFor(() => downs() >= before + 2, "two scroll clicks down");
    const bad = await client.call("desktop.act", { do: "key", text: "ctrl+nosuchkey" });
    expect(bad.error).toMatchObject({ code: "invalid_request", path: "/text" });
  });

  it("hotline screenshot -o writes the PNG; hotline desktop prints a link", () => {
    const out = join(daemon.dirs.root, "shot.png");
    const said = execFileSync(process.execPath, [CLI_MAIN, "screenshot", "-o", out, "--max-width", "800"], {
      env: daemon.cliEnv,
      encoding: "utf8",
    });
    expect(said).toContain("png 800x450 of the 1600x900 screen (scale 0.5)");
    expect(pixels(readFileSync(out)).at(BUTTON_CENTRE.x / 2, BUTTON_CENTRE.y / 2)).toEqual([255, 0, 0]);
    const link = execFileSync(process.execPath, [CLI_MAIN, "desktop"], { env: daemon.cliEnv, encoding: "utf8" });
    expect(link).toMatch(/\/web\/desktop#token=hl_\S+\n\(manage link, expires /);
  });

  it("a step can bring a screenshot back in its reply", async () => {
    const reply = await client.ok("desktop.act", {
      do: "mouse_move",
      coordinate: [10, 10],
      scaledTo: { width: 1600, height: 900 },
      screenshot: { maxWidth: 400 },
    });
    expect(reply.screenshot).toMatchObject({ format: "png", width: 400, height: 225, scale: 0.25 });
    expect(Buffer.from(reply.screenshot.data, "base64").subarray(1, 4).toString()).toBe("PNG");
  });
});

describe.skipIf(!hasDesktop)("without a display", () => {
  it("state.info says why, and every desktop action answers unavailable with that reason", async () => {
    await withDaemon({ env: { DISPLAY: "" } }, async (_daemon, client) => {
      const info = await client.ok("state.info");
      expect(info.desktop).toMatchObject({ available: false });
      expect(info.desktop.reason).toMatch(/no X display/);
      for (const [action, params] of [
        ["desktop.screenshot", {}],
        ["desktop.act", { do: "left_click" }],
      ] as const) {
        const reply = await client.call(action, params);
        expect(reply.error).toMatchObject({ code: "unavailable" });
        expect(reply.error.message).toContain(info.desktop.reason);
      }
    });
  });
});
