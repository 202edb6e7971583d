import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { CodeOutput } from "../../protocol/actions/code.js";
import type { DisplayMessage } from "./messages.js";

/** The bounds of one run's result, which the job's record keeps (in memory and in the job journal) as long as the job. */
export interface OutputLimits {
  /** Bytes of values a result holds inline, all outputs together; past it, values are kept as files of the run. */
  inlineBytes: number;
  /** Outputs (displays and the result) a result lists; past it, they are counted in `omitted`. */
  maxOutputs: number;
  /** Files one run may keep (the driver's and the daemon's together). */
  maxFiles: number;
}

export const DEFAULT_OUTPUT_LIMITS: OutputLimits = { inlineBytes: 64 * 1024, maxOutputs: 500, maxFiles: 100 };

/** The head of a text/plain kept inline when the whole value went to a file. */
const TEXT_HEAD_CHARS = 1024;
/** `omitted` lists at most this many entries; the rest are summed into one. */
const MAX_OMITTED = 100;

const EXTENSIONS: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/svg+xml": "svg",
  "text/html": "html",
  "text/markdown": "md",
  "text/latex": "tex",
  "text/plain": "txt",
  "application/json": "json",
};
const BASE64_TYPES = new Set(["image/png", "image/jpeg"]);

type Omitted = { mime: string; bytes: number; why: string };

/** Where a run keeps its files: in its job's directory, so they go when the job is evicted. */
export function runFilesDir(jobDir: string): string {
  return join(jobDir, "files");
}

/**
 * One run's outputs as the result lists them: MIME bundles, with what does not fit the run's inline
 * budget written to files in the run's directory (`files`, read with code.file) — the driver's own
 * large values arrive there already — and what does not fit at all listed in `omitted`.
 */
export class RunOutputs {
  readonly outputs: CodeOutput[] = [];
  private readonly omitted: Omitted[] = [];
  private omittedRest = { count: 0, bytes: 0 };
  /** Outputs past maxOutputs: counted as one entry of `omitted`. */
  private readonly dropped = { count: 0, bytes: 0 };
  private inlineUsed = 0;
  private files = 0;
  private dirMade = false;

  constructor(
    /** The run's directory for files (the driver writes there too). */
    readonly dir: string,
    /** A prefix for the daemon's own file names, distinct from the driver's `<run id>-<n>`. */
    private readonly prefix: string,
    private readonly limits: OutputLimits = DEFAULT_OUTPUT_LIMITS,
  ) {}

  add(type: CodeOutput["type"], bundle: DisplayMessage): void {
    if (this.outputs.length >= this.limits.maxOutputs) {
      this.dropped.count += 1;
      this.dropped.bytes += Object.values(bundle.data).reduce<number>((n, v) => n + sizeOf(v), 0);
      return;
    }
    const output: CodeOutput = { type, data: {} };
    const files: NonNullable<CodeOutput["files"]> = {};
    for (const [mime, path] of Object.entries(bundle.files)) this.driverFile(mime, path, files);
    // text/plain last: the richer values take the budget first, and the text's head stays inline whatever happens.
    const entries = Object.entries(bundle.data).sort(([a], [b]) => Number(a === "text/plain") - Number(b === "text/plain"));
    for (const [mime, value] of entries) {
      // A MIME type is a key of the result too: thousands of tiny values weigh their names.
      const size = sizeOf(value) + mime.length;
      if (this.fits(size)) {
        output.data[mime] = value;
        continue;
      }
      const file = this.writeFile(mime, value, size);
      if (file) files[mime] = file;
      if (mime === "text/plain" && typeof value === "string") {
        // The text's head stays inline while the budget has room for it; past it only the note does.
        const head = value.slice(0, Math.max(0, Math.min(TEXT_HEAD_CHARS, this.limits.inlineBytes - this.inlineUsed)));
        this.inlineUsed += head.length;
        output.data[mime] = `${head}… [${value.length - head.length} more characters${file ? ` in the file ${file.file}` : ""}]`;
      }
    }
    if (Object.keys(files).length) output.files = files;
    if (bundle.metadata) {
      const size = sizeOf(bundle.metadata);
      if (this.fits(size)) output.metadata = bundle.metadata;
      else this.omit({ mime: "metadata", bytes: size, why: "over the run's inline budget" });
    }
    this.outputs.push(output);
  }

  /** Takes `size` from the inline budget when it has room for it. */
  private fits(size: number): boolean {
    if (this.inlineUsed + size > this.limits.inlineBytes) return false;
    this.inlineUsed += size;
    return true;
  }

  /** The driver's own omissions, then the daemon's. */
  omittedList(fromDriver: Omitted[]): Omitted[] {
    const list = [...fromDriver, ...this.omitted];
    if (this.dropped.count)
      list.push({
        mime: "*",
        bytes: this.dropped.bytes,
        why: `${this.dropped.count} more outputs past the first ${this.limits.maxOutputs} of the run`,
      });
    if (this.omittedRest.count)
      list.push({
        mime: "*",
        bytes: this.omittedRest.bytes,
        why: `${this.omittedRest.count} more values omitted (listed: the first ${MAX_OMITTED})`,
      });
    return list;
  }

  private omit(entry: Omitted): void {
    if (this.omitted.length < MAX_OMITTED) this.omitted.push(entry);
    else {
      this.omittedRest.count += 1;
      this.omittedRest.bytes += entry.bytes;
    }
  }

  /** A file the driver wrote: it must sit in the run's directory (anything else is not the run's to serve). */
  private driverFile(mime: string, path: string, files: NonNullable<CodeOutput["files"]>): void {
    if (dirname(path) !== this.dir || !/^[A-Za-z0-9._-]+$/.test(basename(path))) {
      return this.omit({ mime, bytes: 0, why: `the driver named a file outside the run's directory: ${path.slice(0, 200)}` });
    }
    let bytes: number;
    try {
      bytes = statSync(path).size;
    } catch {
      return this.omit({ mime, bytes: 0, why: `its file ${basename(path)} is missing` });
    }
    this.files += 1;
    files[mime] = { file: basename(path), bytes };
  }

  /** Writes one value to a file of the run; undefined (and listed in `omitted`) when it cannot be kept. */
  private writeFile(mime: string, value: unknown, size: number): { file: string; bytes: number } | undefined {
    if (this.files >= this.limits.maxFiles) {
      this.omit({ mime, bytes: size, why: `over the run's inline budget, and the run already keeps ${this.limits.maxFiles} files` });
      return undefined;
    }
    const bytes =
      typeof value === "string"
        ? Buffer.from(value, BASE64_TYPES.has(mime) ? "base64" : "utf8")
        : Buffer.from(JSON.stringify(value) ?? "null", "utf8");
    const file = `${this.prefix}-${this.files + 1}.${EXTENSIONS[mime] ?? "bin"}`;
    try {
      if (!this.dirMade) mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      this.dirMade = true;
      writeFileSync(join(this.dir, file), bytes, { flag: "wx" });
    } catch (err) {
      this.omit({ mime, bytes: bytes.length, why: `could not write its file: ${(err as Error).message}` });
      return undefined;
    }
    this.files += 1;
    return { file, bytes: bytes.length };
  }
}

/** A value's weight in the result: a string's length, else its JSON's. */
function sizeOf(value: unknown): number {
  if (typeof value === "string") return value.length;
  try {
    return JSON.stringify(value)?.length ?? 4;
  } catch {
    return 0;
  }
}
