/** What the viewers of a terminal job (xterm.js, any modern emulator) can show. */
const TERMINAL_DEFAULTS: Readonly<Record<string, string>> = { TERM: "xterm-256color", COLORTERM: "truecolor" };

const NAMES_UTF8 = /utf-?8/i;

/**
 * A terminal job's environment: it advertises 256 colours and true colour, and a UTF-8 character
 * type when the locale it would get is not UTF-8 (a daemon started with LANG=C), as Coder's agent
 * does. Whatever the job's own `env` sets stays as given; LC_ALL is never touched (it still
 * overrides LC_CTYPE, so an explicit LC_ALL=C keeps the C locale).
 */
export function terminalEnvironment(env: Record<string, string>, own: Record<string, string> | undefined): Record<string, string> {
  const out = { ...env };
  for (const [name, value] of Object.entries(TERMINAL_DEFAULTS)) if (own?.[name] === undefined) out[name] = value;
  const utf8 = [out.LC_ALL, out.LC_CTYPE, out.LANG].some((v) => v !== undefined && NAMES_UTF8.test(v));
  if (!utf8 && own?.LC_CTYPE === undefined) out.LC_CTYPE = "C.UTF-8";
  return out;
}
