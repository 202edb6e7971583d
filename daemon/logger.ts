import pino, { type Logger } from "pino";
import { LogSink } from "./log-sink.js";

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

/**
 * The one root logger: JSON lines on stderr, through a sink that drops rather than waits (a full
 * or broken stderr must never hold up a request or shutdown). What is still queued when the
 * process exits is written once, with bounded retries.
 */
export function createLogger(level: string): Logger {
  const sink = new LogSink(2);
  process.once("exit", () => sink.flushSync());
  return pino({ level, base: { pid: process.pid, name: "hotline" }, redact: { paths: REDACT_PATHS, censor: "[redacted]" } }, sink);
}
