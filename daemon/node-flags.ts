/**
 * The Node flags every launcher runs the daemon with (`npm start`, the `hotline` shebang,
 * `image/install.sh`, the README's systemd unit). A job starts with a fork of the daemon, and a
 * fork copies the page tables of every private page the daemon has touched outside V8's heap
 * (which V8 maps MADV_DONTFORK): ~40 µs per MB on these machines. Both flags keep that memory
 * small — a 1 MB young generation instead of up to 16 MB, and one V8 worker thread instead of
 * one per core, each of which keeps its own malloc arena of several MB.
 */
export const DAEMON_NODE_FLAGS = ["--max-semi-space-size=1", "--v8-pool-size=1"] as const;

/** The launcher flags this process was started without (from the command line or NODE_OPTIONS). */
export function missingNodeFlags(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ""): string[] {
  const given = new Set([...execArgv, ...nodeOptions.split(/\s+/)]);
  return DAEMON_NODE_FLAGS.filter((flag) => !given.has(flag));
}
