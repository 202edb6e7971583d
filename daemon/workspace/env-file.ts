import { ActionError } from "../../protocol/errors.js";

/**
 * The text of a `.env` file, readable both by `sh`'s `. ./.env` / `set -a` and by dotenv-style
 * loaders. Names follow the shell grammar. Values are one line; each is written in the first form
 * that both readers take literally:
 *   - bare              when it holds only  A-Z a-z 0-9 _ . / : @ + , = % -
 *   - 'single-quoted'   when it holds no '
 *   - "double-quoted"   when it holds a ' but none of  " \ $ `
 * A value that needs more than that (a ' together with one of " \ $ `), or holds a newline, CR or
 * NUL, is refused: no quoting is read the same way by every loader, and a wrong guess would hand
 * the program a different secret than the one written.
 */

export const ENV_NAME_PATTERN = "^[A-Za-z_][A-Za-z0-9_]{0,127}$";
const NAME = new RegExp(ENV_NAME_PATTERN);
const BARE = /^[A-Za-z0-9_./:@+,=%-]*$/;
export const MAX_VALUE_BYTES = 64 * 1024;
export const MAX_NAMES = 1000;

/** Formats one value, or throws invalid_request at /values/<NAME> (never quoting the value). */
export function quoteEnvValue(name: string, value: string): string {
  const at = `/values/${name}`;
  if (/[\n\r\0]/.test(value)) {
    throw new ActionError(
      "invalid_request",
      `value of ${name} contains a newline, carriage return or NUL; .env values are one line (encode multi-line secrets, e.g. as base64)`,
      { path: at },
    );
  }
  if (Buffer.byteLength(value) > MAX_VALUE_BYTES)
    throw new ActionError("limit_exceeded", `value of ${name} is larger than ${MAX_VALUE_BYTES} bytes`, { path: at });
  if (value !== "" && BARE.test(value)) return value;
  if (!value.includes("'")) return `'${value}'`;
  if (!/["\\$`]/.test(value)) return `"${value}"`;
  throw new ActionError(
    "invalid_request",
    `value of ${name} contains both ' and one of " \\ $ \`; no .env quoting reads that back literally everywhere (encode it, e.g. as base64)`,
    { path: at },
  );
}

/** Builds the whole file from NAME → value, sorted by name; validates every name and value first. */
export function formatEnvFile(values: Record<string, string>): string {
  const names = Object.keys(values).sort();
  if (names.length > MAX_NAMES) throw new ActionError("limit_exceeded", `at most ${MAX_NAMES} names per .env`, { path: "/values" });
  const lines = ["# Written by hotline secrets.write. Never committed: /.env is excluded and unstaged on every commit."];
  for (const name of names) {
    if (!NAME.test(name)) {
      throw new ActionError(
        "invalid_request",
        `secret name ${JSON.stringify(name.slice(0, 64))} is not allowed: use letters, digits and _, not starting with a digit (e.g. DATABASE_URL)`,
        { path: `/values/${name.replace(/~/g, "~0").replace(/\//g, "~1")}` },
      );
    }
    const value = values[name];
    if (typeof value !== "string")
      throw new ActionError("invalid_request", `value of ${name} must be a string`, { path: `/values/${name}` });
    lines.push(`${name}=${quoteEnvValue(name, value)}`);
  }
  return `${lines.join("\n")}\n`;
}
