/** A command as the transcript shows it, at most. */
const SHOWN_CHARS = 4096;

/**
 * The session's transcript, the log of its shell's job: what a person following the session sees,
 * as a terminal would show it — each command after a `$ ` prompt, its output, a note of a non-zero
 * exit — and between commands whatever background processes write. Each command's own job holds
 * its exact output; this is the readable whole.
 */
export class Transcript {
  constructor(private readonly write: (stream: "stdout" | "stderr", data: Buffer | string) => void) {}

  command(command: string): void {
    const shown = command.length > SHOWN_CHARS ? `${command.slice(0, SHOWN_CHARS - 1)}…` : command;
    this.write("stdout", `$ ${shown.replace(/\n/g, "\n> ")}\n`);
  }

  output(stream: "stdout" | "stderr", data: Buffer): void {
    this.write(stream, data);
  }

  ended(exitCode: number | undefined, midLine: boolean): void {
    if (midLine) this.write("stdout", "\n");
    if (exitCode !== undefined && exitCode !== 0) this.write("stdout", `[exit ${exitCode}]\n`);
  }
}
