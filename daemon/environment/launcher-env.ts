/**
 * What a package manager adds to the environment of the scripts it runs (`npm start`, `npx`,
 * pnpm, yarn): they all set `npm_lifecycle_event`. Those additions describe how the daemon was
 * launched, not the machine, so jobs must not inherit them.
 */
const LAUNCHED_BY_SCRIPT = "npm_lifecycle_event";

/** Variables npm sets for its scripts besides `npm_*`: the start directory, its node, its colour choice. */
const LAUNCHER_VARIABLES = new Set(["INIT_CWD", "NODE", "COLOR"]);

/** PATH entries a package manager puts first: every `node_modules/.bin` up to `/`, and its node-gyp shim. */
const LAUNCHER_PATH_ENTRY = /(?:^|\/)node_modules\/\.bin\/?$|\/node-gyp-bin\/?$/;

/** Whether this environment is that of a script a package manager runs. */
export function launchedByPackageManager(env: NodeJS.ProcessEnv): boolean {
  return env[LAUNCHED_BY_SCRIPT] !== undefined;
}

/** Whether a variable is one the package manager added (only meaningful when it launched us). */
export function isLauncherVariable(name: string): boolean {
  return name.startsWith("npm_") || name.startsWith("NPM_") || LAUNCHER_VARIABLES.has(name);
}

/** PATH without the entries the package manager put in front of it. */
export function withoutLauncherPath(path: string): string {
  return path
    .split(":")
    .filter((entry) => !LAUNCHER_PATH_ENTRY.test(entry))
    .join(":");
}
