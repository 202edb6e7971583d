import { stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { Static } from "@sinclair/typebox";
import type { SearchMatch } from "../../protocol/actions/files-fs.js";
import { ActionError } from "../../protocol/errors.js";
import { runGit } from "../runners/git.js";
import { streamGit } from "../runners/git-stream.js";
import { isRefused, type FsPolicy } from "./policy.js";

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
export async function search(policy: FsPolicy, real: string, options: SearchOptions): Promise<{ matches: Match[]; more: boolean; timedOut: boolean }> {
  const isDir = (await stat(real)).isDirectory();
  const cwd = isDir ? real : dirname(real);
  const inRepo = (await runGit(["rev-parse", "--is-inside-work-tree"], { cwd, allowFailure: true })).stdout.trim() === "true";
  const pathspec = isDir ? (options.glob ? [options.glob] : []) : [`:(literal)${basename(real)}`];
  const args = ["grep", inRepo ? "--untracked" : "--no-index", "-n", "--column", "-z", "-I", "--no-color", options.regex ? "-E" : "-F", "-e", options.pattern, "--", ...pathspec];
  const max = options.maxResults ?? DEFAULT_MAX_RESULTS;
  const matches: Match[] = [];
  const parser = new GrepParser((path, line, column, text) => {
    const full = join(cwd, path);
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
  return { matches, more: result.stopped !== undefined, timedOut: result.stopped === "timeout" };
}

/** Bytes of one output line kept while it streams; a longer line (minified code) is cut, never buffered whole. */
const MAX_LINE_BYTES = 64 * 1024;

/** Parses `git grep -n --column -z` records: path NUL line NUL column NUL text LF (a path may hold any byte but NUL). */
class GrepParser {
  private pending = Buffer.alloc(0);
  private fields: string[] = [];
  /** The head of an over-long text field whose rest is being skipped up to its LF. */
  private cutText: Buffer | undefined;

  constructor(private readonly onMatch: (path: string, line: number, column: number, text: string) => boolean) {}

  /** Returns false once onMatch wants no more. */
  push(chunk: Buffer): boolean {
    let buf = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    for (;;) {
      const stop = this.fields.length < 3 ? 0 : 0x0a;
      const at = buf.indexOf(stop);
      if (at === -1) break;
      this.fields.push((this.cutText ?? buf.subarray(0, at)).toString("utf8"));
      this.cutText = undefined;
      buf = buf.subarray(at + 1);
      if (this.fields.length === 4) {
        const [path, line, column, text] = this.fields as [string, string, string, string];
        this.fields = [];
        if (!this.onMatch(path, Number(line), Number(column), text)) return false;
      }
    }
    if (this.cutText) buf = Buffer.alloc(0);
    else if (buf.length > MAX_LINE_BYTES && this.fields.length === 3) {
      this.cutText = Buffer.from(buf.subarray(0, MAX_LINE_BYTES));
      buf = Buffer.alloc(0);
    }
    this.pending = Buffer.from(buf);
    return true;
  }
}
