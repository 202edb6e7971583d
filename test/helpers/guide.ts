import { ACTIONS } from "../../protocol/index.js";
import { readGuide, type GuideParts } from "../../daemon/guide.js";

const GUIDE_DIR = new URL("../../guide/", import.meta.url).pathname;

/** The guide exactly as the build embeds it: its core (guide/core/) and sections (guide/NN-*.md). */
export function guideParts(): GuideParts {
  return readGuide(
    GUIDE_DIR,
    ACTIONS.map((a) => a.name),
  );
}

/** The whole guide as `state.guide {"section": "all"}` serves it: guide/NN-*.md in name order. */
export function guideText(): string {
  return guideParts().all;
}

/** Every JSON object in the guide's ```json blocks: a block holds one object, or one per line. */
export function jsonExamples(text: string): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const match of text.matchAll(/```json\n([\s\S]*?)```/g)) {
    const block = match[1]!;
    try {
      out.push(JSON.parse(block) as Record<string, unknown>);
    } catch {
      for (const line of block.split("\n").filter((l) => l.trim())) out.push(JSON.parse(line) as Record<string, unknown>);
    }
  }
  return out;
}
