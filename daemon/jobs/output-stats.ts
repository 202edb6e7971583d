/**
 * Bytes of job output written to the logs and read back out to clients (followers and
 * jobs.output), since the daemon started: running totals for the metrics, two additions per piece.
 */
export const outputStats = { writtenBytes: 0, readBytes: 0 };
