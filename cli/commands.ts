import { schemaCommands } from "./commands/schema.js";
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
import { topCommands } from "./commands/top.js";
import { sessionCommands } from "./commands/session.js";
import { codeCommands } from "./commands/code.js";
import type { Command } from "./command.js";

export type { Command, CommandContext } from "./command.js";

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
  ...topCommands,
  ...sessionCommands,
  ...codeCommands,
};
