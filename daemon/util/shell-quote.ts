/** Characters a POSIX shell reads literally in an unquoted word. */
const BARE_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** One word as a shell would need it typed: as is when safe, otherwise in single quotes. */
export function shellWord(word: string): string {
  if (BARE_WORD.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** An argv as one command line that a shell would split back into exactly these words. */
export function shellCommandLine(argv: readonly string[]): string {
  return argv.map(shellWord).join(" ");
}
