import { extname } from "node:path";
import { ActionError } from "../../protocol/errors.js";
import { openRegularFile } from "../util/regular-file.js";

/**
 * Picks how files.run starts a script: the interpreter the caller named, else the one in the
 * script's `#!` line, else the one its extension implies. Only bash, sh and python3 are allowed,
 * and the script is always passed as an argument (it needs no executable bit).
 */

export const INTERPRETERS = ["bash", "sh", "python3"] as const;
export type Interpreter = (typeof INTERPRETERS)[number];

export interface InterpreterChoice {
  interpreter: Interpreter;
  /** Where the choice came from. */
  source: "param" | "shebang" | "extension";
  /** The command to run: interpreter, shebang flags, script path, then the caller's args. */
  argv: string[];
}

const SHEBANG_NAMES: Record<string, Interpreter> = { bash: "bash", sh: "sh", python3: "python3" };
const EXTENSIONS: Record<string, Interpreter> = { ".sh": "bash", ".bash": "bash", ".py": "python3" };
const HEAD_BYTES = 256;

/** Chooses the interpreter for `path` (absolute) and builds the argv; invalid_request when none fits. */
export async function chooseInterpreter(
  path: string,
  interpreter: string | undefined,
  args: readonly string[] = [],
): Promise<InterpreterChoice> {
  const head = await readHead(path);
  if (interpreter !== undefined) {
    if (!(INTERPRETERS as readonly string[]).includes(interpreter)) {
      throw new ActionError("invalid_request", `interpreter ${JSON.stringify(interpreter)} is not supported; use bash, sh or python3`, {
        path: "/interpreter",
      });
    }
    return { interpreter: interpreter as Interpreter, source: "param", argv: [interpreter, path, ...args] };
  }
  const shebang = parseShebang(head);
  if (shebang) {
    const chosen = SHEBANG_NAMES[shebang.program];
    if (!chosen) {
      throw new ActionError(
        "invalid_request",
        `${path} asks for ${JSON.stringify(shebang.line)}; files.run runs only bash, sh and python3 — pass "interpreter" to override`,
        { path: "/path" },
      );
    }
    return { interpreter: chosen, source: "shebang", argv: [chosen, ...shebang.flags, path, ...args] };
  }
  const byExtension = EXTENSIONS[extname(path).toLowerCase()];
  if (byExtension) return { interpreter: byExtension, source: "extension", argv: [byExtension, path, ...args] };
  throw new ActionError(
    "invalid_request",
    `cannot tell how to run ${path}: no #! line and no .sh or .py extension; pass "interpreter": "bash", "sh" or "python3"`,
    { path: "/path" },
  );
}

/** `#!/usr/bin/env -S bash -e` → {program: "bash", flags: ["-e"]}; the program is the basename. */
export function parseShebang(head: string): { program: string; flags: string[]; line: string } | null {
  if (!head.startsWith("#!")) return null;
  const line = head.slice(2).split("\n", 1)[0]!.replace(/\r$/, "").trim();
  let words = line.split(/\s+/).filter(Boolean);
  if (words.length === 0) return null;
  if (basename(words[0]!) === "env") {
    words = words.slice(1);
    while (words[0]?.startsWith("-") || words[0]?.includes("=")) words = words.slice(1);
  }
  if (words.length === 0) return null;
  const program = basename(words[0]!);
  // Only option flags are carried over (e.g. `bash -e`); anything else would change what runs.
  const flags = words.slice(1).filter((w) => /^-[A-Za-z]+$/.test(w));
  return { program, flags, line: `#!${line}` };
}

function basename(p: string): string {
  return p.slice(p.lastIndexOf("/") + 1);
}

/** The first bytes of the script; a FIFO or device is refused before it is opened (it could block forever). */
async function readHead(path: string): Promise<string> {
  const { handle } = await openRegularFile(path, "/path");
  try {
    const buf = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await handle.read(buf, 0, HEAD_BYTES, 0);
    return buf.subarray(0, bytesRead).toString("utf8");
  } catch (err) {
    throw new ActionError(
      "invalid_request",
      `cannot read script ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      { path: "/path" },
    );
  } finally {
    await handle.close();
  }
}
