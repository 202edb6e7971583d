import type { CliClient } from "./client.js";

export interface CommandContext {
  /** The daemon, opened on the first request: `client.request(action, params)` (typed by protocol/ for a known action). */
  client: CliClient;
  /** Positional arguments after the command name. */
  args: string[];
  flags: Record<string, string | boolean | undefined | (string | boolean)[]>;
  json: boolean;
  tty: boolean;
}

/** A CLI verb: resolves to the process exit code. */
export type Command = (ctx: CommandContext) => Promise<number>;
