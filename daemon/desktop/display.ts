import type { DesktopInfo } from "../../protocol/actions/desktop.js";
import { ActionError } from "../../protocol/errors.js";
import { runX } from "./x-command.js";

/** The screen as the daemon last saw it. */
export interface Screen {
  display: string;
  width: number;
  height: number;
}

/** How long a probe's answer is reused: state.info and each action ask, the display may come and go. */
const PROBE_TTL_MS = 1000;

/** `:1`, `:1.0`, `unix:1` → 1; undefined for a display on another host (never captured over TCP). */
export function displayNumber(display: string): number | undefined {
  const m = /^(?:unix)?:(\d+)(?:\.\d+)?$/.exec(display);
  return m ? Number(m[1]) : undefined;
}

/**
 * Whether there is a desktop: a local X display (the `display` setting, DISPLAY by default) that
 * answers xdotool. Asked lazily, since the X server may start after the daemon (supervisord).
 */
export class DisplayProbe {
  private last: { at: number; info: Promise<DesktopInfo> } | undefined;

  constructor(readonly display: string | undefined) {}

  info(): Promise<DesktopInfo> {
    const now = Date.now();
    if (!this.last || now - this.last.at > PROBE_TTL_MS) this.last = { at: now, info: this.probe() };
    return this.last.info;
  }

  /** The screen, or `unavailable` with the probe's reason. */
  async screen(): Promise<Screen> {
    const info = await this.info();
    if (!info.available) throw new ActionError("unavailable", `no desktop: ${info.reason}`);
    return info;
  }

  private async probe(): Promise<DesktopInfo> {
    const display = this.display;
    if (!display) return { available: false, reason: "no X display is configured (set DISPLAY or the display setting, --display :1)" };
    if (displayNumber(display) === undefined)
      return {
        available: false,
        display,
        reason: `display ${display} is not a local X display (:N); the daemon drives local displays only`,
      };
    try {
      const out = (await runX("xdotool", ["getdisplaygeometry"], { display, timeoutMs: 5000 })).toString("utf8");
      const [width, height] = out.trim().split(/\s+/).map(Number);
      if (!width || !height)
        return { available: false, display, reason: `xdotool getdisplaygeometry said ${JSON.stringify(out.slice(0, 100))}` };
      return { available: true, display, width, height };
    } catch (err) {
      return { available: false, display, reason: (err as Error).message };
    }
  }
}
