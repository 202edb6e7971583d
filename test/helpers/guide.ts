import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const GUIDE_DIR = new URL("../../guide/", import.meta.url).pathname;

/** The guide exactly as the build embeds it: guide/*.md in name order. */
export function guideText(): string {
  return readdirSync(GUIDE_DIR)
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `${readFileSync(join(GUIDE_DIR, f), "utf8").trimEnd()}\n`)
    .join("\n");
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
