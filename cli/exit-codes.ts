/**
 * The CLI's own exit codes. A command that follows a job otherwise exits with the job's code
 * (124 timed out, 130 cancelled, 1 for another failure without a code).
 */
export const EXIT = {
  /** The daemon answered the request with an error. */
  requestFailed: 1,
  /** Bad command line. */
  usage: 2,
  /** Anything else that went wrong in the CLI itself. */
  other: 3,
  /** No daemon at the URL, or it stopped or died while the command waited (sysexits EX_UNAVAILABLE). */
  daemonUnavailable: 69,
} as const;

/** The daemon stopped or died while the CLI waited on a job. */
export class DaemonGone extends Error {
  constructor(
    readonly job: string,
    reason: string,
  ) {
    super(
      `the daemon went away while following job ${job} (${reason}); ` +
        `nothing more of it will arrive here. Once a daemon runs again, \`hotline status ${job}\` shows how it ended.`,
    );
  }
}

/** No daemon answers at the URL the CLI was given or found. */
export class NoDaemon extends Error {}
