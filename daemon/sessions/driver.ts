import { fileURLToPath } from "node:url";

/** The rc file the daemon ships (the build copies it beside this module in dist/). */
export const DRIVER_RC = fileURLToPath(new URL("./driver.bash", import.meta.url));

/** An interactive bash (PROMPT_COMMAND after every line, `set -u` aborts a line, not the shell) without readline, profiles or ~/.bashrc. */
export function bashArgv(): string[] {
  return ["bash", "--noprofile", "--rcfile", DRIVER_RC, "--noediting", "-i"];
}

const NON_ASCII = /[^\x00-\x7f]/;

/**
 * The line that runs command `seq` (its text goes to fd 3 first): read exactly its bytes, then eval
 * them at the top level with the session's stdin and stderr and the driver's descriptors closed.
 * `A`: ASCII only, so bash's `read -N` (which counts characters) may count in any locale.
 */
export function controlLine(seq: number, text: Buffer, command: string): string {
  const mode = NON_ASCII.test(command) ? "U" : "A";
  return `__hl_read ${seq} ${text.length} ${mode}; builtin eval "$__hl_cmd" <"$__hl_fifo" 2>&"$__hl_err" {__hl_out}>&- {__hl_in}<&- {__hl_err}>&-\n`;
}

/** The exact line an interactive bash writes when a foreground child died of a signal and it cannot restore a terminal it does not have. */
export function ttyNoise(shellPid: number): RegExp {
  return new RegExp(`^bash: \\[${shellPid}: \\d+ \\(255\\)\\] tcsetattr: Inappropriate ioctl for device\\n`, "m");
}

/**
 * What sessions set unless the session's `env` says otherwise: tools that would stop and ask on a
 * terminal get no terminal here, so they are told not to ask, and pagers print.
 */
export const NONINTERACTIVE_DEFAULTS: Readonly<Record<string, string>> = {
  GIT_TERMINAL_PROMPT: "0",
  GIT_PAGER: "cat",
  PAGER: "cat",
  SYSTEMD_PAGER: "",
  DEBIAN_FRONTEND: "noninteractive",
  PIP_NO_INPUT: "1",
};
