import type { DesktopInfo, Screenshot } from "../../protocol/actions/desktop.js";
import { ChromiumBrowser } from "./chromium.js";
import { Capturer, type CaptureRequest } from "./capture.js";
import { DisplayProbe, displayNumber, type Screen } from "./display.js";
import { runStep, type Step } from "./input.js";
import { Turns } from "./turns.js";

/** A screenshot as the protocol's reply (without the image) and the image bytes. */
export interface Shot {
  reply: Omit<Screenshot, "data">;
  image: Buffer;
}

/** Input steps waiting at most; more are refused (limit_exceeded). */
const MAX_WAITING_STEPS = 16;

/**
 * The desktop as the actions see it: the display probe, screenshots and input steps. Steps run
 * one at a time in the order they came, so a client that sends several without waiting gets them
 * applied in order (a drag never interleaves with a click).
 */
export class Desktop {
  readonly probe: DisplayProbe;
  /** The Chromium of browser.open. */
  readonly browser = new ChromiumBrowser();
  private readonly capturer = new Capturer();
  private readonly turns = new Turns(MAX_WAITING_STEPS, "desktop steps");

  constructor(
    display: string | undefined,
    /** The VNC relay of desktop.open, when one is set up. */
    private readonly vnc?: { unavailable(): string | undefined },
  ) {
    this.probe = new DisplayProbe(display);
  }

  /** Why desktop.open cannot link to the desktop, or undefined. */
  vncUnavailable(): string | undefined {
    return this.vnc ? this.vnc.unavailable() : "the daemon has no VNC relay";
  }

  info(): Promise<DesktopInfo> {
    return this.probe.info();
  }

  screen(): Promise<Screen> {
    return this.probe.screen();
  }

  /**
   * A screenshot once the probe says there is a desktop (else `unavailable` with its reason). The
   * capture starts beside the probe, since each is an X client's start (~20 ms), and is dropped when
   * the probe refuses.
   */
  async screenshotOfDisplay(request: CaptureRequest): Promise<Shot> {
    const display = this.probe.display;
    const shot = display !== undefined && displayNumber(display) !== undefined ? this.screenshot(display, request) : undefined;
    shot?.catch(() => {}); // the probe's refusal is the answer
    const screen = await this.screen(); // refuses every display the capture did not start for
    if (!shot || screen.display !== display) throw new Error(`the probe saw display ${screen.display}, not ${display}`);
    return shot;
  }

  /** A screenshot of `display` as the protocol's reply (without the image) and the image bytes. */
  async screenshot(display: string, request: CaptureRequest): Promise<Shot> {
    const shot = await this.capturer.capture(display, request);
    const scale = Math.round((shot.width / shot.region.width) * 10000) / 10000;
    return {
      reply: {
        format: shot.format,
        width: shot.width,
        height: shot.height,
        scale,
        screen: shot.screen,
        region: shot.region,
        bytes: shot.image.length,
      },
      image: shot.image,
    };
  }

  /** Runs one step after those before it. */
  async act(screen: Screen, step: Step): Promise<{ x: number; y: number } | undefined> {
    if (step.do === "wait") return runStep(screen.display, step); // holds nobody else's steps
    return this.turns.run(() => runStep(screen.display, step));
  }

  async close(): Promise<void> {
    await Promise.all([this.capturer.close(), this.browser.close()]);
  }
}
