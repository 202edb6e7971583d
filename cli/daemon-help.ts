import { loadConfig, SETTINGS, type Config } from "../daemon/config.js";

/** `hotline daemon --help`: every setting from the SETTINGS table, with the value it has now. */
export function daemonHelp(env: NodeJS.ProcessEnv = process.env): string {
  let current: Readonly<Config> | undefined;
  let problem = "";
  try {
    current = loadConfig({}, env);
  } catch (err) {
    problem = `\n(the current configuration does not load: ${(err as Error).message})\n`;
  }
  const rows = SETTINGS.map((s) => {
    const arg = s.kind === "number" ? "N" : s.kind === "list" ? "A,B" : "VALUE";
    // Keys of nested sections are dotted (environmentCache.push).
    const value = current
      ? s.key.split(".").reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], current)
      : undefined;
    const shown = Array.isArray(value) ? value.join(",") || "(none)" : String(value ?? "");
    return [`  --${s.flag} ${arg}`, s.env, shown];
  });
  const w0 = Math.max(...rows.map((r) => r[0]!.length));
  const w1 = Math.max(...rows.map((r) => r[1]!.length));
  const lines = rows.map(([flag, envName, value]) => `${flag!.padEnd(w0)}  ${envName!.padEnd(w1)}  ${value}`);
  return `hotline daemon [flags] — run the daemon in the foreground (SIGTERM or Ctrl-C stops it)

Each flag can also be set by its environment variable, or by its camelCase key in
<config>/config.json or <system-config-dir>/config.json; flags win, then the environment, then
the user file, then the system file. The last column is the value it has now.

${`  flag`.padEnd(w0)}  ${"environment".padEnd(w1)}  current value
${lines.join("\n")}
${problem}`;
}
