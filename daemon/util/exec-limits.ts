import { readFileSync } from "node:fs";
import { ActionError } from "../../protocol/errors.js";

/** Linux's MAX_ARG_STRLEN: one argument or one NAME=value, counting its terminating NUL. */
export const MAX_EXEC_STRING_BYTES = 128 * 1024;
const KIB = 1024;
/** What to do instead, for every message about exec's size limits. */
export const EXEC_SIZE_ADVICE =
  'Linux limits one argument or environment variable to 128 KiB and all of them together to about 2 MiB; pass large content on stdin ("stdin") or in a file';

/**
 * What execve accepts for argv + environment strings together (fs/exec.c: a quarter of the stack
 * limit, at most 6 MiB, at least 128 KiB), read once from this process's stack limit.
 */
function execTotalLimit(): number {
  let stack = 8 * KIB * KIB;
  try {
    const m = /^Max stack size\s+(\d+|unlimited)/m.exec(readFileSync("/proc/self/limits", "utf8"));
    if (m) stack = m[1] === "unlimited" ? Infinity : Number(m[1]);
  } catch {
    // no /proc: assume the common 8 MiB stack
  }
  return Math.max(Math.min(6 * KIB * KIB, stack / 4), 128 * KIB);
}
let totalLimit: number | undefined;

const kib = (bytes: number): string => `${Math.ceil(bytes / KIB)} KiB`;

/** One string's size as execve counts it; UTF-16 length × 3 bounds it, so most strings skip the exact count. */
function execBytes(s: string, over: number): number {
  return s.length * 3 + 1 <= over ? s.length + 1 : Buffer.byteLength(s) + 1;
}

/**
 * Refuses (limit_exceeded) an argv or environment that execve would refuse with E2BIG, naming the
 * argument or variable; `where` gives the request field of an argument, when it came from one.
 */
export function checkExecSize(
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
  own: Readonly<Record<string, string>> | undefined,
  where: (index: number) => string | undefined = () => undefined,
): void {
  let total = 0;
  argv.forEach((arg, i) => {
    const bytes = execBytes(arg, MAX_EXEC_STRING_BYTES);
    if (bytes > MAX_EXEC_STRING_BYTES) {
      const path = where(i);
      throw new ActionError(
        "limit_exceeded",
        `${i === 0 ? "the program name" : `argument ${i}`} of the command is ${kib(bytes)}; ${EXEC_SIZE_ADVICE}`,
        path ? { path } : {},
      );
    }
    total += bytes + 8;
  });
  for (const [name, value] of Object.entries(env)) {
    const bytes = execBytes(value, MAX_EXEC_STRING_BYTES) + name.length + 1;
    if (bytes > MAX_EXEC_STRING_BYTES) {
      const from = own?.[name] !== undefined ? { path: `/env/${name}` } : {};
      throw new ActionError("limit_exceeded", `environment variable ${name} is ${kib(bytes)}; ${EXEC_SIZE_ADVICE}`, from);
    }
    total += bytes + 8;
  }
  totalLimit ??= execTotalLimit();
  if (total > totalLimit) {
    throw new ActionError(
      "limit_exceeded",
      `the command and its environment are ${kib(total)} together, over the ${kib(totalLimit)} this machine allows; ${EXEC_SIZE_ADVICE}`,
    );
  }
}
