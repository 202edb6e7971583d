import type { CodeLanguage, CodeOutput, CodeRunResult, ContextStatus } from "../protocol/actions/code.js";
import type { JobStatus } from "../protocol/common.js";
import type { ParamsFor } from "../protocol/index.js";
import type { Job, JobHost } from "./job.js";

/** What a code helper needs of its client: requests, and job handles. */
export interface CodeHost extends JobHost {
  job(id: string): Job;
}

/** `client.code.run` options: the code.run parameters but `code`; without `wait`, it waits for the run's end. */
export type CodeRunOptions = Omit<ParamsFor<"code.run">, "code">;

/** One image of a run: its bytes whether it came inline or as a file of the run. */
export interface CodeImage {
  mime: "image/png" | "image/jpeg" | "image/svg+xml";
  data: Buffer;
  /** The output it belongs to (its index in `result.outputs`). */
  output: number;
  width?: number;
  height?: number;
}

/** What `client.code.run` resolves with once the run ended (or with `wait`, when it ended in time). */
export interface CodeRun {
  job: Job;
  status: JobStatus;
  /** The run's result; undefined only when `wait` passed first (the run goes on: `job.wait()`). */
  result?: CodeRunResult;
  /** stdout and stderr of the run, interleaved; undefined when the run had not ended. */
  output?: Buffer;
}

/** jobs.wait's longest wait per call; longer waits are several calls. */
const MAX_WAIT_MS = 600_000;
const IMAGE_TYPES = ["image/png", "image/jpeg", "image/svg+xml"] as const;

/**
 * `client.code`: stateful Python and JavaScript contexts (guide section `code`). `run` waits for
 * the run's end unless given `wait`, and resolves with its typed result; `images` gathers a result's
 * figures whether they came inline or were kept as files of the run.
 */
export class CodeClient {
  constructor(private readonly host: CodeHost) {}

  async run(code: string, options: CodeRunOptions = {}): Promise<CodeRun> {
    const untilEnd = options.wait === undefined;
    const reply = await this.host.request("code.run", { ...options, code, wait: options.wait ?? MAX_WAIT_MS });
    const job = this.host.job(reply.job.id);
    if (reply.result) {
      const output = reply.output;
      const complete = output && output.omittedBytes === 0;
      return {
        job,
        status: reply.job,
        result: reply.result,
        output: complete ? Buffer.from(output.data, output.encoding === "base64" ? "base64" : "utf8") : await job.output(),
      };
    }
    if (!untilEnd) return { job, status: reply.job };
    const status = await job.wait();
    return { job, status, result: status.result as CodeRunResult | undefined, output: await job.output() };
  }

  /** A new context (code.context.create); resolves once its interpreter is ready. */
  async createContext(language: CodeLanguage, options: Omit<ParamsFor<"code.context.create">, "language"> = {}): Promise<ContextStatus> {
    return (await this.host.request("code.context.create", { ...options, language })).context;
  }

  async listContexts(): Promise<ContextStatus[]> {
    return (await this.host.request("code.context.list", {})).contexts;
  }

  /** A fresh interpreter for the context; resolves with the names its state held. */
  async restartContext(context: string): Promise<{ context: ContextStatus; lost: string[] }> {
    const { context: status, lost } = await this.host.request("code.context.restart", { context });
    return { context: status, lost };
  }

  async removeContext(context: string): Promise<void> {
    await this.host.request("code.context.remove", { context });
  }

  /** A file a run kept (an output's `files`), read whole with code.file. */
  async file(job: string, file: string): Promise<Buffer> {
    const parts: Buffer[] = [];
    for (let offset = 0; ; ) {
      const page = await this.host.request("code.file", { job, file, offset });
      parts.push(Buffer.from(page.data, "base64"));
      if (page.eof) return Buffer.concat(parts);
      offset = page.next;
    }
  }

  /** The images of a run's outputs, in order, read from the run's files where they were kept there. */
  async images(run: { job: Job | string; result?: CodeRunResult }): Promise<CodeImage[]> {
    const job = typeof run.job === "string" ? run.job : run.job.id;
    const images: CodeImage[] = [];
    for (const [index, output] of (run.result?.outputs ?? []).entries()) {
      for (const mime of IMAGE_TYPES) {
        const data = await this.valueBytes(job, output, mime);
        if (!data) continue;
        const size = output.metadata?.[mime] as { width?: number; height?: number } | undefined;
        images.push({ mime, data, output: index, ...(size?.width ? { width: size.width, height: size.height } : {}) });
      }
    }
    return images;
  }

  private async valueBytes(job: string, output: CodeOutput, mime: string): Promise<Buffer | undefined> {
    const inline = output.data[mime];
    if (typeof inline === "string") return Buffer.from(inline, mime === "image/svg+xml" ? "utf8" : "base64");
    const file = output.files?.[mime];
    return file ? this.file(job, file.file) : undefined;
  }
}
