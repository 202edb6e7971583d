/**
 * What the CLI shows people of a daemon's strings (job titles, commands, paths, errors): control
 * characters (C0, DEL, C1), line and paragraph separators and bidirectional overrides become
 * visible escapes (`\n`, `\x1b`, `\u202e`), so no value can move the cursor, recolour the
 * terminal or draw a fake line. JSON output is untouched: JSON escapes them itself.
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

export function displayText(text: string): string {
  return text.replace(UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    return NAMED[c] ?? (code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16)}`);
  });
}

/** A copy of a reply with every string (keys included) passed through displayText. */
export function displayValue<T>(value: T): T {
  if (typeof value === "string") return displayText(value) as T;
  if (Array.isArray(value)) return value.map(displayValue) as T;
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[displayText(k)] = displayValue(v);
    return out as T;
  }
  return value;
}
