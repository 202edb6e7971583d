import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** One part of the guide as state.guide serves it: a guide/NN-name.md file. */
export interface GuideSection {
  /** `jobs` for guide/20-jobs.md */
  name: string;
  /** its first heading, without the #s */
  title: string;
  text: string;
  /** the actions it documents under a heading of their own */
  actions: string[];
}

/** The guide split for serving: the compact core (guide/core/*.md), the sections, and all of them joined. */
export interface GuideParts {
  core: string;
  sections: GuideSection[];
  all: string;
}

/** The whole-guide and core names a section may not take. */
export const RESERVED_SECTIONS = ["core", "all"] as const;

/** guide/20-jobs.md → `jobs`: the file's name without its order prefix. */
export function sectionName(file: string): string {
  return file.replace(/\.md$/, "").replace(/^\d+-/, "");
}

/** The .md files of a directory in name order, each trimmed to end in exactly one newline. */
function markdownFiles(dir: string): Array<{ file: string; text: string }> {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".md"))
    .map((e) => e.name)
    .sort()
    .map((file) => ({ file, text: `${readFileSync(join(dir, file), "utf8").trimEnd()}\n` }));
}

/**
 * The guide directory as served: guide/NN-*.md are the sections (`all` is them joined by a blank
 * line, in name order — the whole text as before the split), guide/core/*.md the core.
 */
export function readGuide(dir: string, actions: readonly string[]): GuideParts {
  const files = markdownFiles(dir);
  const sections = files.map(({ file, text }) => {
    const headings = text.split("\n").filter((l) => /^#{1,4} /.test(l));
    const title = (headings[0] ?? file).replace(/^#+ /, "");
    const documented = actions.filter((a) => headings.some((h) => /^#{2,4} /.test(h) && h.includes(`\`${a}\``)));
    return { name: sectionName(file), title, text, actions: documented };
  });
  const core = markdownFiles(join(dir, "core"))
    .map((f) => f.text)
    .join("\n");
  return { core, sections, all: files.map((f) => f.text).join("\n") };
}
