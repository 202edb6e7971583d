import type { DesktopStep } from "../../protocol/actions/desktop.js";
import { ActionError } from "../../protocol/errors.js";
import { typeText } from "./type-text.js";
import { runX } from "./x-command.js";

/** One step of desktop.act with its coordinates already on the screen. */
export interface Step {
  do: DesktopStep;
  at?: { x: number; y: number };
  from?: { x: number; y: number };
  text?: string;
  scrollDirection?: "up" | "down" | "left" | "right";
  scrollAmount?: number;
  duration?: number;
}

const SCROLL_BUTTON = { up: "4", down: "5", left: "6", right: "7" } as const;
const CLICKS: Partial<Record<DesktopStep, { button: string; repeat: number }>> = {
  left_click: { button: "1", repeat: 1 },
  right_click: { button: "3", repeat: 1 },
  middle_click: { button: "2", repeat: 1 },
  double_click: { button: "1", repeat: 2 },
  triple_click: { button: "1", repeat: 3 },
};

/**
 * xdotool's command names (3.20160805's, Debian's, and the ones later versions added). xdotool
 * ends a key list at the first word equal to one of them, ignoring case, and runs the rest as
 * commands — `exec` among them — so no such word may reach it as a key.
 */
const XDOTOOL_COMMANDS = new Set(
  (
    "getactivewindow getwindowfocus getwindowname getwindowclassname getwindowpid getwindowgeometry getdisplaygeometry " +
    "search selectwindow help version behave behave_screen_edge click getmouselocation key keydown keyup mousedown " +
    "mousemove mousemove_relative mouseup set_window type windowactivate windowfocus windowkill windowclose windowquit " +
    "windowmap windowminimize windowmove windowraise windowlower windowreparent windowsize windowstate windowunmap " +
    "set_num_desktops get_num_desktops set_desktop get_desktop set_desktop_for_window get_desktop_for_window " +
    "get_desktop_viewport set_desktop_viewport exec sleep"
  ).split(" "),
);

/** One key of a chord: an X keysym name or keycode (letters, digits, _), or one character. */
const KEY_PART = /^(?:[A-Za-z0-9_]{1,64}|[^\p{Cc}\p{Z}+])$/u;

/**
 * Key names and chords as xdotool reads them ("ctrl+s", "Return", "shift+Tab alt+F4"), one
 * argument each; anything else is refused here, naming the bad key, before xdotool sees it.
 */
function keyNames(text: string | undefined, step: string): string[] {
  const names = (text ?? "").trim().split(/\s+/).filter(Boolean);
  if (names.length === 0)
    throw new ActionError("invalid_request", `${step} needs text: the keys, as xdotool names them (e.g. "ctrl+s", "Return")`, {
      path: "/text",
    });
  for (const name of names) {
    const shown = JSON.stringify(name.slice(0, 100));
    const refuse = (why: string): never => {
      throw new ActionError(
        "invalid_request",
        `${shown} is not a key name: ${why}; give X key names and chords separated by spaces ("ctrl+s", "Return", "shift+Tab")`,
        { path: "/text", details: { key: name.slice(0, 100) } },
      );
    };
    if (XDOTOOL_COMMANDS.has(name.toLowerCase())) refuse("xdotool would run it as a command");
    const parts = name.split("+");
    if (parts.some((p) => p === "")) refuse('a chord joins keys with "+" (the plus key is "plus")');
    const bad = parts.find((p) => !KEY_PART.test(p));
    if (bad !== undefined) refuse(`${JSON.stringify(bad.slice(0, 100))} is neither a key name (letters, digits, _) nor one character`);
  }
  return names;
}

/** xdotool says so on stderr, and exits 0, when a key name is unknown. */
function unknownKey(stderr: string): ActionError | undefined {
  const m = /No such key name '([^']*)'/.exec(stderr);
  return m
    ? new ActionError(
        "invalid_request",
        `no key is named ${JSON.stringify(m[1])}; use X keysym names (Return, Escape, ctrl+a, F5, Page_Down …)`,
        { path: "/text", details: { key: m[1] } },
      )
    : undefined;
}

const move = (at: { x: number; y: number } | undefined): string[] => (at ? ["mousemove", String(at.x), String(at.y)] : []);

/** The xdotool command line of a pointer or key step (type, cursor_position and wait are not xdotool commands). */
function commandLine(step: Step): string[] {
  const click = CLICKS[step.do];
  if (click) return [...move(step.at), "click", "--repeat", String(click.repeat), "--delay", "80", click.button];
  switch (step.do) {
    case "mouse_move":
      if (!step.at) throw new ActionError("invalid_request", "mouse_move needs coordinate", { path: "/coordinate" });
      return move(step.at);
    case "left_click_drag":
      if (!step.at || !step.from)
        throw new ActionError("invalid_request", "left_click_drag needs startCoordinate and coordinate", {
          path: step.from ? "/coordinate" : "/startCoordinate",
        });
      return [...move(step.from), "mousedown", "1", "sleep", "0.05", ...move(step.at), "sleep", "0.05", "mouseup", "1"];
    case "left_mouse_down":
      return [...move(step.at), "mousedown", "1"];
    case "left_mouse_up":
      return [...move(step.at), "mouseup", "1"];
    case "scroll": {
      const direction = step.scrollDirection ?? "down";
      const clicks = ["click", "--repeat", String(step.scrollAmount ?? 3), "--delay", "20", SCROLL_BUTTON[direction]];
      // With text, those keys are held while scrolling (shift+scroll, ctrl+scroll to zoom).
      const held = step.text ? keyNames(step.text, "scroll") : [];
      return [...move(step.at), ...(held.length ? ["keydown", ...held] : []), ...clicks, ...(held.length ? ["keyup", ...held] : [])];
    }
    case "key":
      return ["key", "--clearmodifiers", ...keyNames(step.text, "key")];
    case "hold_key": {
      const keys = keyNames(step.text, "hold_key");
      return ["keydown", ...keys, "sleep", String(step.duration ?? 1), "keyup", ...keys];
    }
    default:
      throw new ActionError("internal", `${step.do} is not an xdotool step`);
  }
}

/** Runs one step on the display; cursor_position resolves with the pointer, every other step with nothing. */
export async function runStep(display: string, step: Step): Promise<{ x: number; y: number } | undefined> {
  if (step.do === "wait") {
    await new Promise((resolve) => setTimeout(resolve, (step.duration ?? 1) * 1000));
    return undefined;
  }
  if (step.do === "type") {
    if (!step.text) throw new ActionError("invalid_request", "type needs text", { path: "/text" });
    if (step.at) await runX("xdotool", move(step.at), { display });
    await typeText(display, step.text);
    return undefined;
  }
  if (step.do === "cursor_position") {
    const out = (await runX("xdotool", ["getmouselocation", "--shell"], { display })).toString("utf8");
    const x = Number(/^X=(\d+)/m.exec(out)?.[1]);
    const y = Number(/^Y=(\d+)/m.exec(out)?.[1]);
    if (!Number.isFinite(x) || !Number.isFinite(y))
      throw new ActionError("internal", `xdotool getmouselocation said ${JSON.stringify(out.slice(0, 200))}`);
    return { x, y };
  }
  const timeoutMs = 10_000 + (step.do === "hold_key" ? (step.duration ?? 1) * 1000 : 0);
  await runX("xdotool", commandLine(step), { display, timeoutMs, refuse: unknownKey });
  return undefined;
}
