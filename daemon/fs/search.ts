import { lstat, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { Static } from "@sinclair/typebox";
import type { SearchMatch } from "../../protocol/actions/files-fs.js";
import { ActionError } from "../../protocol/errors.js";
import { streamGit } from "../runners/git-stream.js";
import { assertNotGuardedInode, isRefused, type FsPolicy } from "./policy.js";

export const DEFAULT_MAX_RESULTS = 100;
/** A search stops after this long and returns what it found, with timedOut: true. */
export const SEARCH_TIMEOUT_MS = 10_000;
const MAX_TEXT = 500;

type Match = Static<typeof SearchMatch>;

export interface SearchOptions {
  pattern: string;
  regex?: boolean;
  glob?: string;
  maxResults?: number;
}

/**
 * Searches with git grep: in a repository its tracked and untracked files without the ignored
 * ones (`--untracked`), elsewhere every file (`--no-index`), binary files skipped, so both cases
 * share one regex dialect (POSIX extended) and give columns. Output and time are bounded.
 */
export async function search(
  policy: FsPolicy,
  real: string,
  options: SearchOptions,
): Promise<{ matches: Match[]; more: boolean; timedOut: boolean }> {
  const isDir = (await stat(real)).isDirectory();
  const cwd = isDir ? real : dirname(real);
  const inRepo = await insideWorkTree(cwd);
  const pathspec = isDir ? (options.glob ? [options.glob] : []) : [`:(literal)${basename(real)}`];
  const args = [
    "grep",
    inRepo ? "--untracked" : "--no-index",
    "-n",
    "--column",
    "-z",
    "-I",
    "--no-color",
    options.regex ? "-E" : "-F",
    "-e",
    options.pattern,
    "--",
    ...pathspec,
  ];
  const max = options.maxResults ?? DEFAULT_MAX_RESULTS;
  const matches: Match[] = [];
  const parser = new GrepParser((path, line, column, text) => {
    const full = cwd === "/" ? `/${path}` : `${cwd}/${path}`; // git prints clean relative paths: no join needed
    if (isRefused(policy, full)) return true;
    if (matches.length === max) return false;
    matches.push({ path: full, line, column, text: text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) : text });
    return true;
  });
  const result = await streamGit(args, { cwd, timeoutMs: SEARCH_TIMEOUT_MS, onData: (chunk) => parser.push(chunk) });
  if (!result.stopped && result.exitCode !== 0 && result.exitCode !== 1) {
    const reason = result.stderr.trim().split("\n").slice(-2).join(" ") || `exit ${result.exitCode}`;
    throw new ActionError("invalid_request", `git grep refused the search: ${reason}`, { path: options.regex ? "/pattern" : "/path" });
  }
  return { matches: await withoutGuarded(policy, matches), more: result.stopped !== undefined, timedOut: result.stopped === "timeout" };
}

/** Drops matches in files that are hard links to the daemon's own files (git grep reads them by another name). */
async function withoutGuarded(policy: FsPolicy, matches: Match[]): Promise<Match[]> {
  const paths = [...new Set(matches.map((m) => m.path))];
  const refused = new Set<string>();
  for (let i = 0; i < paths.length; i += 8) {
    await Promise.all(
      paths.slice(i, i + 8).map(async (path) => {
        const st = await lstat(path).catch(() => undefined);
        if (
          st &&
          (await assertNotGuardedInode(policy, st, path).then(
            () => false,
            () => true,
          ))
        )
          refused.add(path);
      }),
    );
  }
  return refused.size === 0 ? matches : matches.filter((m) => !refused.has(m.path));
}

/**
 * Whether `dir` is in a git work tree: a `.git` (directory, or file of a worktree) in it or an
 * ancestor. Looked up with a few stats instead of `git rev-parse`, whose process start alone
 * cost as much as a small search.
 */
async function insideWorkTree(dir: string): Promise<boolean> {
  for (let d = dir; ; d = dirname(d)) {
    if (basename(d) === ".git") return false; // inside a repository's own directory: not its work tree
    if (
      await lstat(join(d, ".git")).then(
        () => true,
        () => false,
      )
    )
      return true;
    if (d === "/") return false;
  }
}

/** Bytes of one output line kept while it streams; a longer line (minified code) is cut, never buffered whole. */
const MAX_LINE_BYTES = 64 * 1024;

/**
 * Parses `git grep -n --column -z` records: path NUL line NUL column NUL text LF. Each chunk's
 * complete lines are decoded at once (an LF byte never sits inside a UTF-8 sequence); a path
 * holding an LF is rejoined, since a record always has its three NULs.
 */
class GrepParser {
  private pending = Buffer.alloc(0);
  /** An over-long line was cut at MAX_LINE_BYTES; its rest is dropped up to the next LF. */
  private skipping = false;

  constructor(private readonly onMatch: (path: string, line: number, column: number, text: string) => boolean) {}

  /** Returns false once onMatch wants no more. */
  push(chunk: Buffer): boolean {
    if (this.skipping) {
      const lf = chunk.indexOf(0x0a);
      if (lf === -1) return true;
      this.skipping = false;
      chunk = chunk.subarray(lf);
    }
    const buf = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    const last = buf.lastIndexOf(0x0a);
    if (last === -1) {
      this.pending = Buffer.from(buf.length > MAX_LINE_BYTES ? buf.subarray(0, MAX_LINE_BYTES) : buf);
      this.skipping = buf.length > MAX_LINE_BYTES;
      return true;
    }
    this.pending = Buffer.from(buf.subarray(last + 1));
    let carry = "";
    for (const piece of buf.toString("utf8", 0, last).split("\n")) {
      const record = carry + piece;
      const a = record.indexOf("\0");
      const b = record.indexOf("\0", a + 1);
      const c = b === -1 ? -1 : record.indexOf("\0", b + 1);
      if (a === -1 || c === -1) {
        carry = `${record}\n`; // the path held an LF
        continue;
      }
      carry = "";
      if (!this.onMatch(record.slice(0, a), Number(record.slice(a + 1, b)), Number(record.slice(b + 1, c)), record.slice(c + 1)))
        return false;
    }
    if (carry) this.pending = Buffer.concat([Buffer.from(carry), this.pending]);
    return true;
  }
}
