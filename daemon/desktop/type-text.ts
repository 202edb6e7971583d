import { ActionError } from "../../protocol/errors.js";
import { runX } from "./x-command.js";

/** Between keys, for applications that read input slowly; 4096 characters take ~20 s at most. */
const KEY_DELAY_MS = 4;
/** Before a spare keycode is remapped or restored, the application gets this long to read the keys sent with it. */
const SETTLE_MS = 60;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The X keysym of one character: Latin-1 keysyms equal the code point, every other is 0x01000000 + it. */
export function keysymOf(char: string): string {
  if (char === "\n") return "Return";
  if (char === "\t") return "Tab";
  const code = char.codePointAt(0)!;
  if (code < 0x20 || (code >= 0x7f && code < 0xa0))
    throw new ActionError(
      "invalid_request",
      `text holds the control character U+${code.toString(16).padStart(4, "0")}; type only printable text, newlines and tabs (use key for other keys)`,
      { path: "/text" },
    );
  if (code <= 0xff) return `0x${code.toString(16)}`;
  return `U${code.toString(16).toUpperCase().padStart(4, "0")}`;
}

/**
 * The keycodes with no keysym at all: free to borrow. Keycodes below 10 are left out, since
 * xdotool reads "8" as the keysym of the digit, not as keycode 8.
 */
async function spareKeycodes(display: string): Promise<number[]> {
  const table = (await runX("xmodmap", ["-pke"], { display })).toString("utf8");
  const spare: number[] = [];
  for (const line of table.split("\n")) {
    const m = /^keycode\s+(\d+)\s*=\s*$/.exec(line);
    if (m && Number(m[1]) >= 10) spare.push(Number(m[1]));
  }
  return spare;
}

/**
 * Types any Unicode text exactly, whatever the keyboard layout: each distinct character is bound
 * to a spare keycode on every level and group (so no layout, Shift or group state changes what
 * it produces), the keycodes are pressed in order, and the spare keycodes are emptied again.
 * `xdotool type` looks characters up in the active layout and rebinds one scratch keycode per
 * character, which loses non-ASCII characters when the application reads the keymap after the
 * next rebinding (xdotool #97); here a binding holds until every key sent with it has settled.
 */
export async function typeText(display: string, text: string): Promise<void> {
  const chars = [...text];
  const syms = chars.map(keysymOf);
  const spare = await spareKeycodes(display);
  if (spare.length === 0) throw new ActionError("unavailable", `display ${display} has no free keycode to type with`);
  let at = 0;
  try {
    while (at < syms.length) {
      const bound = new Map<string, number>();
      const keys: string[] = [];
      for (; at < syms.length; at++) {
        const sym = syms[at]!;
        let code = bound.get(sym);
        if (code === undefined) {
          if (bound.size === spare.length) break;
          code = spare[bound.size]!;
          bound.set(sym, code);
        }
        keys.push(String(code));
      }
      const bind = [...bound].flatMap(([sym, code]) => ["-e", `keycode ${code} = ${sym} ${sym} ${sym} ${sym}`]);
      await runX("xmodmap", bind, { display });
      await runX("xdotool", ["key", "--clearmodifiers", "--delay", String(KEY_DELAY_MS), ...keys], {
        display,
        timeoutMs: 10_000 + keys.length * (KEY_DELAY_MS + 10),
      });
      await sleep(SETTLE_MS);
    }
  } finally {
    await runX(
      "xmodmap",
      spare.flatMap((code) => ["-e", `keycode ${code} =`]),
      { display },
    ).catch(() => undefined);
  }
}
