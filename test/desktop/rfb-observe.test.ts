import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestDaemon, type TestClient } from "../helpers/daemon.js";
import { desktopToolsAvailable } from "../helpers/x-server.js";
import { handshake, keyEvent, pointerEvent, RawViewer, roundTrip, updateRequest } from "./rfb-viewer.js";
import { startTigervnc, type VncDesktop } from "./vnc-servers.js";

// An observe desktop link's VNC stream, driven byte by byte: whatever RFB version a viewer
// claims and however its messages are split, its pointer and key events never reach the server.

const ready = desktopToolsAvailable();
const HOME = { x: 7, y: 9 };

function pointer(desktop: VncDesktop): { x: number; y: number } {
  const out = execFileSync("xdotool", ["getmouselocation", "--shell"], { env: desktop.env }).toString();
  return { x: Number(/^X=(\d+)/m.exec(out)![1]), y: Number(/^Y=(\d+)/m.exec(out)![1]) };
}

function movePointerHome(desktop: VncDesktop): void {
  execFileSync("xdotool", ["mousemove", String(HOME.x), String(HOME.y)], { env: desktop.env });
  expect(pointer(desktop)).toEqual(HOME);
}

async function observeLink(daemon: TestDaemon, client: TestClient): Promise<string> {
  const { token } = await client.ok("tokens.create", { scope: "observe" });
  const observer = await daemon.client({}, token);
  try {
    const link = await observer.ok("desktop.open");
    expect(link.scope).toBe("observe");
    return link.desktopUrl as string;
  } finally {
    await observer.close();
  }
}

describe.skipIf(!ready)("an observe desktop link drops input whatever the viewer claims (TigerVNC, no password)", () => {
  let desktop: VncDesktop;
  let daemon: TestDaemon;
  let client: TestClient;

  beforeAll(async () => {
    desktop = await startTigervnc(640, 480);
    daemon = await TestDaemon.start({ args: ["--display", desktop.display, "--vnc", `127.0.0.1:${desktop.vncPort}`] });
    client = await daemon.client();
  });

  afterAll(async () => {
    await client?.close();
    await daemon?.stop();
    daemon?.cleanup();
    await desktop?.stop();
  });

  it("RFB 003.005 (read as 3.3 by the server): a viewer that answers as if it chose VNC authentication cannot smuggle a PointerEvent", async () => {
    movePointerHome(desktop);
    const viewer = await RawViewer.open(await observeLink(daemon, client));
    expect((await viewer.read(12)).toString("latin1")).toBe("RFB 003.008\n");
    viewer.send("RFB 003.005\n");
    // The server reads 3.5 as 3.3 and chooses the security type itself: None (a 4-byte 1).
    expect([...(await viewer.read(4))]).toEqual([0, 0, 0, 1]);
    // A relay that thought this was 3.7+ would take [2] for "VNC authentication" and pass the next
    // 16 bytes as the DES response; the server reads [2] as ClientInit and then two PointerEvents.
    viewer.send([2, ...pointerEvent(321, 123), 2, 0, 0, 0, ...pointerEvent(322, 124)]);
    const init = await viewer.read(24);
    await viewer.read(init.readUInt32BE(20));
    await roundTrip(viewer).catch(() => undefined); // a confused relay may end the stream: the pointer tells
    expect(pointer(desktop)).toEqual(HOME);
    viewer.close();
  });

  for (const version of ["003.003", "003.005", "003.006", "003.007", "003.008", "003.889"]) {
    it(`RFB ${version}: the handshake works, pixels flow, pointer and key events are dropped`, async () => {
      movePointerHome(desktop);
      const viewer = await RawViewer.open(await observeLink(daemon, client));
      const screen = await handshake(viewer, version);
      expect(screen).toMatchObject({ width: 640, height: 480 });
      viewer.send([...pointerEvent(400, 300, 1), ...pointerEvent(400, 300, 0), ...keyEvent(0x61, true), ...keyEvent(0x61, false)]);
      await roundTrip(viewer); // handled in order: the events before it would have moved the pointer by now
      expect(pointer(desktop)).toEqual(HOME);
      expect(viewer.closed).toBeUndefined();
      viewer.close();
    });
  }

  it("desktop.open with scope observe, asked by a manage token, gives a link whose input is dropped", async () => {
    movePointerHome(desktop);
    const link = await client.ok("desktop.open", { scope: "observe" });
    expect(link.scope).toBe("observe");
    const viewer = await RawViewer.open(link.desktopUrl);
    await handshake(viewer, "003.008");
    viewer.send(pointerEvent(321, 123));
    await roundTrip(viewer);
    expect(pointer(desktop)).toEqual(HOME);
    viewer.close();
  });

  it("the same bytes from a manage link do move the pointer (the test can see input that gets through)", async () => {
    movePointerHome(desktop);
    const link = await client.ok("desktop.open");
    const viewer = await RawViewer.open(link.desktopUrl);
    await handshake(viewer, "003.005");
    viewer.send(pointerEvent(321, 123));
    await roundTrip(viewer);
    expect(pointer(desktop)).toEqual({ x: 321, y: 123 });
    viewer.close();
  });

  it("a greeting that is not RFB 3.x ends the stream before the server reads it", async () => {
    for (const greeting of ["RFB 004.001\n", "RFB 03.0005\n", "RFB +03.+05\n"]) {
      const viewer = await RawViewer.open(await observeLink(daemon, client));
      await viewer.read(12);
      viewer.send(greeting);
      const closed = await viewer.closedNow();
      expect(closed.reason).toMatch(/RFB|version/);
    }
  });

  it("a viewer that talks before the server's greeting has arrived waits for it (nothing is misread)", async () => {
    movePointerHome(desktop);
    const viewer = await RawViewer.open(await observeLink(daemon, client));
    // Everything at once, before reading anything: 3.3, ClientInit, a PointerEvent, an update request.
    viewer.send(Buffer.concat([Buffer.from("RFB 003.003\n"), Buffer.from([1, ...pointerEvent(200, 100), ...updateRequest()])]));
    await viewer.read(12 + 4);
    const init = await viewer.read(24);
    await viewer.read(init.readUInt32BE(20));
    expect((await viewer.read(1))[0]).toBe(0); // the FramebufferUpdate
    expect(pointer(desktop)).toEqual(HOME);
    viewer.close();
  });
});

describe.skipIf(!ready)("an observe desktop link to a VNC server with a password (TigerVNC, VNC authentication)", () => {
  const PASSWORD = "s3cret!x";
  let desktop: VncDesktop;
  let daemon: TestDaemon;
  let client: TestClient;

  beforeAll(async () => {
    desktop = await startTigervnc(640, 480, PASSWORD);
    daemon = await TestDaemon.start({ args: ["--display", desktop.display, "--vnc", `127.0.0.1:${desktop.vncPort}`] });
    client = await daemon.client();
  });

  afterAll(async () => {
    await client?.close();
    await daemon?.stop();
    daemon?.cleanup();
    await desktop?.stop();
  });

  for (const version of ["003.008", "003.007", "003.003"]) {
    it(`RFB ${version}: the 16-byte response in pieces is waited for; the viewer gets in and its input is dropped`, async () => {
      movePointerHome(desktop);
      const viewer = await RawViewer.open(await observeLink(daemon, client));
      const screen = await handshake(viewer, version, PASSWORD);
      expect(screen.securityTypes).toContain(2);
      expect(screen).toMatchObject({ width: 640, height: 480 });
      viewer.send(pointerEvent(300, 200));
      await roundTrip(viewer);
      expect(pointer(desktop)).toEqual(HOME);
      viewer.close();
    });
  }

  it("a wrong password is the server's refusal, not a relay error", async () => {
    const viewer = await RawViewer.open(await observeLink(daemon, client));
    await expect(handshake(viewer, "003.008", "wrong")).rejects.toThrow(/SecurityResult 1|closed/);
    viewer.close();
  });
});
