// The console's view of a code run's figures: the PNG and JPEG images of its result, drawn on
// canvases (the pages' CSP loads nothing from data: or blob: URLs; createImageBitmap needs neither).
import type { CodeRunResult } from "../protocol/actions/code.js";
import type { JobStatus } from "../protocol/common.js";
import type { LinkConnection } from "../client/link-connection.js";
import { decodeOutput } from "./link.js";

const IMAGE_TYPES = ["image/png", "image/jpeg"] as const;
/** Figures drawn per run at most (a run may have hundreds of outputs). */
const MAX_FIGURES = 20;

/** The figures' box under the output terminal, made on first use. */
function box(panel: HTMLElement): HTMLElement {
  let figures = document.getElementById("figures");
  if (!figures) {
    figures = document.createElement("div");
    figures.id = "figures";
    panel.append(figures);
  }
  return figures;
}

async function fileBytes(conn: LinkConnection, job: string, file: string): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for (let offset = 0; ; ) {
    const page = await conn.request("code.file", { job, file, offset });
    parts.push(decodeOutput(page.data, "base64"));
    if (page.eof) break;
    offset = page.next;
  }
  return new Uint8Array(await new Blob(parts as BlobPart[]).arrayBuffer());
}

async function draw(into: HTMLElement, bytes: Uint8Array, mime: string, label: string): Promise<void> {
  const bitmap = await createImageBitmap(new Blob([bytes as BlobPart], { type: mime }));
  const canvas = document.createElement("canvas");
  canvas.width = bitmap.width;
  canvas.height = bitmap.height;
  canvas.title = label;
  canvas.style.maxWidth = "100%";
  canvas.getContext("2d")?.drawImage(bitmap, 0, 0);
  bitmap.close();
  into.append(canvas);
}

/** Shows the figures of `job` (a finished code run) in the panel, replacing the last run's; other jobs clear it. */
export async function showFigures(conn: LinkConnection | undefined, job: JobStatus, panel: HTMLElement): Promise<void> {
  const figures = box(panel);
  if (figures.dataset.job === job.id) return;
  figures.dataset.job = job.id;
  figures.replaceChildren();
  const result = job.kind === "code" ? (job.result as CodeRunResult | undefined) : undefined;
  if (!conn || !result) return;
  let drawn = 0;
  for (const [index, output] of result.outputs.entries()) {
    for (const mime of IMAGE_TYPES) {
      if (drawn >= MAX_FIGURES || figures.dataset.job !== job.id) return;
      const inline = output.data[mime];
      const file = output.files?.[mime];
      if (typeof inline !== "string" && !file) continue;
      const bytes = typeof inline === "string" ? decodeOutput(inline, "base64") : await fileBytes(conn, job.id, file!.file);
      if (figures.dataset.job !== job.id) return; // another job was selected meanwhile
      await draw(figures, bytes, mime, `${job.id} output ${index + 1} (${mime})`);
      drawn++;
    }
  }
}
