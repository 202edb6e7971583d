import pino, { type Logger } from "pino";

/** Paths that may carry secrets anywhere they are logged; pino replaces them before writing. */
export const REDACT_PATHS = [
  "token",
  "*.token",
  "authorization",
  "*.authorization",
  "headers.authorization",
  "*.headers.authorization",
  "values",
  "*.values",
  "env",
  "*.env",
  "password",
  "*.password",
];

/** The one root logger: JSON lines on stderr. */
export function createLogger(level: string): Logger {
  return pino({ level, base: { pid: process.pid, name: "hotline" }, redact: { paths: REDACT_PATHS, censor: "[redacted]" } }, pino.destination({ dest: 2, sync: false }));
}
