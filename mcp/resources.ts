import type { ReadResourceResult, Resource, ResourceTemplate } from "@modelcontextprotocol/sdk/types.js";
import { HotlineError, type HotlineClient } from "../client/index.js";

export const GUIDE_URI = "hotline://guide";
export const JOB_OUTPUT_TEMPLATE = "hotline://jobs/{id}/output";
const JOB_OUTPUT = /^hotline:\/\/jobs\/([^/]+)\/output$/;

/** A job output resource returns at most this much: its tail, with the skipped bytes said (jobs_output pages the rest). */
const OUTPUT_RESOURCE_BYTES = 1024 * 1024;

/** The guide as a resource: its SHA-256 and version travel in `_meta`, like state.guide returns them. */
export async function listResources(client: HotlineClient): Promise<Resource[]> {
  const guide = await client.request("state.guide");
  return [
    {
      uri: GUIDE_URI,
      name: "guide",
      title: "The hotline agent guide",
      description: "Every action, its parameters, results and errors, and how jobs behave. Read it before the first call.",
      mimeType: "text/markdown",
      size: Buffer.byteLength(guide.text),
      _meta: { sha256: guide.sha256, version: guide.version },
    },
  ];
}

export const RESOURCE_TEMPLATES: ResourceTemplate[] = [
  {
    uriTemplate: JOB_OUTPUT_TEMPLATE,
    name: "job-output",
    title: "A job's output",
    description: `The output log of a job (all streams interleaved); the last ${OUTPUT_RESOURCE_BYTES} bytes when it is longer (jobs_output reads any range).`,
    mimeType: "text/plain",
  },
];

export async function readResource(client: HotlineClient, uri: string): Promise<ReadResourceResult> {
  if (uri === GUIDE_URI) {
    const guide = await client.request("state.guide");
    return { contents: [{ uri, mimeType: "text/markdown", text: guide.text, _meta: { sha256: guide.sha256, version: guide.version } }] };
  }
  const match = JOB_OUTPUT.exec(uri);
  if (!match) throw new HotlineError("not_found", `no resource ${uri}; resources are ${GUIDE_URI} and ${JOB_OUTPUT_TEMPLATE}`);
  const job = decodeURIComponent(match[1]!);
  const status = await client.request("jobs.status", { job });
  const from = Math.max(0, status.outputBytes - OUTPUT_RESOURCE_BYTES);
  const bytes = await client.job(job).output({ from });
  const meta = { job, state: status.state, from, bytes: status.outputBytes };
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return { contents: [{ uri, mimeType: "application/octet-stream", blob: bytes.toString("base64"), _meta: meta }] };
  }
  return { contents: [{ uri, mimeType: "text/plain", text, _meta: meta }] };
}
