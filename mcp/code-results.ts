import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { CodeOutput, CodeRunResult, HotlineClient, JobStatus } from "../client/index.js";

/** The action whose tool result carries a run's rich outputs. */
const CODE_RUN = "code.run";
/** An image kept as a file of the run is sent as image content up to this size; past it, the result names the file. */
const MAX_IMAGE_BYTES = 4 * 1024 * 1024;
/** Text values (text/plain, markdown, a traceback) are cut to this many characters in the text content. */
const MAX_TEXT_CHARS = 8000;

type Content = CallToolResult["content"][number];

const cut = (text: string): string =>
  text.length <= MAX_TEXT_CHARS
    ? text
    : `${text.slice(0, MAX_TEXT_CHARS)}… [${text.length - MAX_TEXT_CHARS} more characters in structuredContent]`;

/** One output as MCP content: a PNG or JPEG as image content (so the model sees the chart), the rest as text. */
async function outputContent(client: HotlineClient, job: string, output: CodeOutput): Promise<Content[]> {
  const content: Content[] = [];
  let imaged = false;
  for (const mime of ["image/png", "image/jpeg"] as const) {
    const inline = output.data[mime];
    const file = output.files?.[mime];
    if (typeof inline === "string") content.push({ type: "image", data: inline, mimeType: mime });
    else if (file && file.bytes <= MAX_IMAGE_BYTES)
      content.push({ type: "image", data: (await client.code.file(job, file.file)).toString("base64"), mimeType: mime });
    else if (file)
      content.push({ type: "text", text: `(a ${mime} of ${file.bytes} bytes: code_file {"job": "${job}", "file": "${file.file}"})` });
    else continue;
    imaged = true;
  }
  const text = output.data["text/markdown"] ?? output.data["text/plain"];
  // A figure's text/plain ("<Figure size 640x480 with 1 Axes>") says nothing the image does not.
  if (typeof text === "string" && !(imaged && /^<Figure/.test(text)))
    content.push({ type: "text", text: cut(`${output.type === "result" ? "Out" : "Display"}: ${text}`) });
  const others = Object.keys({ ...output.data, ...output.files }).filter(
    (m) => !["text/plain", "text/markdown", "image/png", "image/jpeg"].includes(m),
  );
  if (others.length) content.push({ type: "text", text: `(also as ${others.join(", ")} in structuredContent)` });
  return content;
}

/** The line that says how the run went and whether the context's state is still there. */
function headline(result: CodeRunResult): string {
  const parts = [
    `${result.language} run ${result.status}`,
    `context ${result.context}`,
    `generation ${result.generation}`,
    `execution ${result.executionCount}`,
  ];
  let line = parts.join(", ");
  if (result.contextRestarted) {
    const lost = result.lost?.length
      ? `; lost: ${result.lost.join(", ")}${result.lostTotal ? ` (${result.lostTotal} names in all)` : ""}`
      : "";
    line += `\nThe context was restarted (its variables are gone): ${result.restartReason ?? "?"}${lost}`;
  }
  return line;
}

/**
 * The hook of the job-tool path (server.ts) for code_run: once the run ended, its result as MCP
 * content — the status and stdout/stderr text the job tools give, then each output's images as
 * image content and its text as text, then the error's traceback — and structuredContent with the
 * result at the top. Other tools' results, and a run still going, pass unchanged.
 */
export async function withCodeResults(client: HotlineClient, action: string, tool: CallToolResult): Promise<CallToolResult> {
  const structured = tool.structuredContent as { job?: JobStatus; output?: unknown } | undefined;
  const result = structured?.job?.result as CodeRunResult | undefined;
  if (action !== CODE_RUN || tool.isError || !structured?.job || !result) return tool;
  const { result: _result, ...job } = structured.job;
  const content: Content[] = [{ type: "text", text: headline(result) }, ...tool.content];
  for (const output of result.outputs) content.push(...(await outputContent(client, job.id, output)));
  if (result.error)
    // A traceback ends with the error's own line; a bare error (the interpreter died) has none.
    content.push({
      type: "text",
      text: cut(result.error.traceback.length ? result.error.traceback.join("\n") : `${result.error.name}: ${result.error.value}`),
    });
  if (result.omitted?.length)
    content.push({ type: "text", text: `Omitted: ${result.omitted.map((o) => `${o.mime} (${o.bytes} bytes): ${o.why}`).join("; ")}` });
  return { content, structuredContent: { ...structured, job, result } };
}
