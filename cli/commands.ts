import { schemaCommands } from "./commands/schema.js";
import type { CliClient } from "./client.js";
import { coreCommands } from "./commands/core.js";
import { jobCommands } from "./commands/jobs.js";
import { workspaceCommands } from "./commands/workspace.js";
import { prepareCommands } from "./commands/prepare.js";
import { fileCommands } from "./commands/files.js";
import { cacheCommands } from "./commands/cache.js";
import { fsCommands } from "./commands/fs.js";
import { browserCommands } from "./commands/browser.js";
import { sshCommands } from "./commands/ssh.js";
import { previewCommands } from "./commands/preview.js";
import { desktopCommands } from "./commands/desktop.js";

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

/** Every CLI verb; feature modules add theirs as a module of cli/commands/ listed here. */
export const COMMANDS: Record<string, Command> = {
  ...coreCommands,
  ...jobCommands,
  ...prepareCommands,
  ...fileCommands,
  ...workspaceCommands,
  ...schemaCommands,
  ...cacheCommands,
  ...fsCommands,
  ...browserCommands,
  ...sshCommands,
  ...previewCommands,
  ...desktopCommands,
};
