import type { ReadResourceResult, Resource, ResourceTemplate } from "@modelcontextprotocol/sdk/types.js";
import { HotlineError, type HotlineClient } from "../client/index.js";

/** The guide's compact core; each section is GUIDE_URI/<section>, the whole text GUIDE_URI/all. */
export const GUIDE_URI = "hotline://guide";
export const JOB_OUTPUT_TEMPLATE = "hotline://jobs/{id}/output";
const JOB_OUTPUT = /^hotline:\/\/jobs\/([^/]+)\/output$/;
const GUIDE_SECTION = /^hotline:\/\/guide\/([a-z][a-z0-9.-]{0,63})$/;

/** The resource of one guide section (`core` is GUIDE_URI itself). */
export function guideUri(section: string): string {
  return section === "core" ? GUIDE_URI : `${GUIDE_URI}/${section}`;
}

/** A job output resource returns at most this much: its tail, with the skipped bytes said (jobs_output pages the rest). */
const OUTPUT_RESOURCE_BYTES = 1024 * 1024;

/**
 * The guide as resources, split as state.guide serves it: the core first (read it before the first
 * call), then one resource per section and the whole text; each `_meta` has that text's SHA-256.
 */
export async function listResources(client: HotlineClient): Promise<Resource[]> {
  const [core, all] = await Promise.all([client.request("state.guide"), client.request("state.guide", { section: "all" })]);
  const meta = (sha256: string) => ({ sha256, version: core.version });
  return [
    {
      uri: GUIDE_URI,
      name: "guide",
      title: "The hotline agent guide: its core",
      description:
        "The protocol, jobs, the common actions with an example each, errors, and an index of the sections. Read it before the first call.",
      mimeType: "text/markdown",
      size: Buffer.byteLength(core.text),
      _meta: meta(core.sha256),
    },
    ...core.sections.map((s) => ({
      uri: guideUri(s.name),
      name: `guide-${s.name}`,
      title: `Guide section: ${s.title}`,
      description: s.actions.length ? `The full rules of ${s.actions.join(", ")}.` : `The guide's section "${s.title}".`,
      mimeType: "text/markdown",
      size: s.bytes,
    })),
    {
      uri: guideUri("all"),
      name: "guide-all",
      title: "The whole hotline agent guide",
      description: "Every section in one text (large: prefer the core and the sections you need).",
      mimeType: "text/markdown",
      size: Buffer.byteLength(all.text),
      _meta: meta(all.sha256),
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
  const section = uri === GUIDE_URI ? "core" : GUIDE_SECTION.exec(uri)?.[1];
  if (section) {
    const guide = await client.request("state.guide", { section });
    const _meta = { sha256: guide.sha256, version: guide.version, section: guide.section };
    return { contents: [{ uri, mimeType: "text/markdown", text: guide.text, _meta }] };
  }
  const match = JOB_OUTPUT.exec(uri);
  if (!match)
    throw new HotlineError(
      "not_found",
      `no resource ${uri}; resources are ${GUIDE_URI}, ${GUIDE_URI}/<section> and ${JOB_OUTPUT_TEMPLATE}`,
    );
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
