import type { JobStatus } from "../../protocol/common.js";
import type { HotlineClient } from "../client.js";

/** Streams a job's output to this process's stdout/stderr until job.exit; resolves with the final status. */
export async function followToStdio(client: HotlineClient, job: string, from = 0, onProgress?: (p: Record<string, unknown>) => void): Promise<JobStatus> {
  return new Promise<JobStatus>((resolve, reject) => {
    const off = client.onEvent((event) => {
      if (event.job !== job) return;
      if (event.event === "job.output") {
        const bytes = Buffer.from(event.data as string, event.encoding === "base64" ? "base64" : "utf8");
        (event.stream === "stderr" ? process.stderr : process.stdout).write(bytes);
      } else if (event.event === "job.progress" && onProgress) onProgress(event.progress as Record<string, unknown>);
      else if (event.event === "job.exit") {
        off();
        resolve(event.status as JobStatus);
      }
    });
    client.request("jobs.follow", { job, from }).catch((err: Error) => {
      off();
      reject(err);
    });
  });
}
