import { ActionError } from "../../../protocol/errors.js";
import { hashParams } from "../canonical.js";
import type { Job, JobRecord } from "../job.js";
import type { JobTable } from "./table.js";
import type { StartJobOptions } from "./types.js";

/**
 * The job a start with a key reuses (the same key with equal parameters), undefined for a new one;
 * the key with other parameters is a `conflict`. `paramsHash`: of the kind and params, only with a key.
 */
export function keyedJob(table: JobTable, options: StartJobOptions): { reused?: Job; paramsHash?: string } {
  // Only a key makes the parameters matter later (a retry with the same key must match them).
  if (options.key === undefined) return {};
  const paramsHash = hashParams({ kind: options.kind, params: options.params });
  const job = table.byKey(options.key);
  if (!job) return { paramsHash };
  if (job.record.paramsHash === paramsHash) return { reused: job, paramsHash };
  throw new ActionError("conflict", `key ${JSON.stringify(options.key)} was used for job ${job.id} with other parameters; use a new key`, {
    path: "/key",
    details: { job: job.id },
  });
}

/** The record of a new, queued job. */
export function newRecord(id: string, options: StartJobOptions, paramsHash: string | undefined): JobRecord {
  const record: JobRecord = {
    id,
    kind: options.kind,
    title: options.title,
    state: "queued",
    createdAt: new Date().toISOString(),
    outputBytes: 0,
  };
  if (options.key !== undefined) {
    record.key = options.key;
    record.paramsHash = paramsHash;
  }
  if (options.cwd !== undefined) record.cwd = options.cwd;
  return record;
}
