/**
 * Toolsets: the MCP tools in named groups, so a session lists only what it uses. An MCP client puts
 * every listed tool into the model's context on every turn; all 49 tools were 143 KB. A session
 * starts with the default toolsets (`hotline mcp --toolsets …`, `/mcp?toolsets=…`) and the
 * `toolsets` tool enables more while it runs (notifications/tools/list_changed). Every tool of the
 * session's scope can be called whether its toolset is listed or not: the choice costs context, never
 * reach.
 */

export interface Toolset {
  /** One line: what an agent finds there, as the `toolsets` tool lists it. */
  about: string;
  /** Listed from the start of a session unless the client names its own toolsets. */
  default: boolean;
}

export const TOOLSETS = {
  core: {
    about: "the daemon and its guide; shell commands as jobs, their output and input; files: read, write, edit, list, search",
    default: true,
  },
  files: { about: "stat, mkdir, move, remove; verified downloads, archives, scripts run as jobs", default: false },
  workspace: { about: "git repositories, a worktree per task, .env secrets, external coders run in a task", default: false },
  nix: { about: "Nix environments for a workspace (prepare), their cache, the pinned nixpkgs catalog", default: false },
  web: { about: "listening ports, previews of the sandbox's servers, Chromium over CDP", default: false },
  desktop: { about: "the desktop: screenshots, clicks and typing (computer), a link to it for a person", default: false },
  access: { about: "links and credentials for people and tools: web terminal, console, SSH, tokens", default: false },
  sessions: { about: "a persistent shell session (cd, export, a venv carry over) and Python and JavaScript REPLs", default: true },
  operator: { about: "what operators watch: the daemon's metrics", default: false },
} as const satisfies Record<string, Toolset>;

export type ToolsetName = keyof typeof TOOLSETS;

/** Every toolset name, for `--toolsets all`. */
export const ALL_TOOLSETS = Object.keys(TOOLSETS) as ToolsetName[];

export const DEFAULT_TOOLSETS = ALL_TOOLSETS.filter((name) => TOOLSETS[name].default);

/**
 * The toolset of each tool, by action name (tools that are not an action by their tool name). A
 * new action is one line here; test/mcp/toolsets.test.ts fails while an action with a tool has none.
 * This wave's: `session.*` and `code.*` go to a default toolset of their own, `sessions` (a
 * stateful shell and REPLs are what an agent runs most: they must be there from the first turn,
 * and `--toolsets core` still leaves them out); `state.metrics` to `operator` (a person's view of
 * the sandbox; an agent seldom needs it).
 */
export const TOOLSET_OF: Readonly<Record<string, ToolsetName>> = {
  "state.info": "core",
  "state.guide": "core",
  shell: "core",
  "jobs.list": "core",
  "jobs.status": "core",
  "jobs.output": "core",
  "jobs.wait": "core",
  "jobs.input": "core",
  "jobs.resize": "core",
  "jobs.cancel": "core",
  "files.read": "core",
  "files.write": "core",
  "files.edit": "core",
  "files.list": "core",
  "files.search": "core",
  "files.stat": "files",
  "files.mkdir": "files",
  "files.move": "files",
  "files.remove": "files",
  "files.download": "files",
  "files.extract": "files",
  "files.run": "files",
  "repos.add": "workspace",
  "repos.list": "workspace",
  "repos.snapshot": "workspace",
  "repos.bundle": "workspace",
  "tasks.create": "workspace",
  "tasks.list": "workspace",
  "tasks.commit": "workspace",
  "tasks.run": "workspace",
  "tasks.merge": "workspace",
  "tasks.remove": "workspace",
  "secrets.write": "workspace",
  prepare: "nix",
  "cache.list": "nix",
  "cache.prune": "nix",
  "state.catalog": "nix",
  "ports.list": "web",
  "ports.wait": "web",
  "preview.open": "web",
  "browser.open": "web",
  computer: "desktop",
  "desktop.open": "desktop",
  "terminal.open": "access",
  "console.open": "access",
  "ssh.open": "access",
  "tokens.create": "access",
  "tokens.list": "access",
  "tokens.revoke": "access",
  "session.open": "sessions",
  "session.run": "sessions",
  "session.status": "sessions",
  "session.list": "sessions",
  "session.close": "sessions",
  "code.run": "sessions",
  "code.context.create": "sessions",
  "code.context.list": "sessions",
  "code.context.restart": "sessions",
  "code.context.remove": "sessions",
  "code.file": "sessions",
  "state.metrics": "operator",
};

/**
 * The toolsets a client asked for (`core,web`, `all`, `default`), checked; undefined for nothing
 * asked (the defaults apply). An unknown name is an Error naming the known ones.
 */
export function parseToolsets(text: string | undefined): ToolsetName[] | undefined {
  if (text === undefined || text.trim() === "") return undefined;
  const names = new Set<ToolsetName>();
  for (const raw of text.split(",")) {
    const name = raw.trim();
    if (name === "all") ALL_TOOLSETS.forEach((n) => names.add(n));
    else if (name === "default") DEFAULT_TOOLSETS.forEach((n) => names.add(n));
    else if (name in TOOLSETS) names.add(name as ToolsetName);
    else if (name !== "")
      throw new Error(`no toolset ${JSON.stringify(name)}; the toolsets are ${ALL_TOOLSETS.join(", ")} (or all, default)`);
  }
  return [...names];
}
