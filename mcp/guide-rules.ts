/** A tool description carries at most this much of the guide (the full guide is a resource). */
const MAX_RULES_CHARS = 900;

/**
 * The guide's key rules for one action: the first prose paragraph (or list) under the heading that
 * names it in backticks, without code blocks and tables. Empty when the guide has no such heading.
 */
export function keyRules(guide: string, action: string): string {
  const lines = guide.split("\n");
  const start = lines.findIndex((line) => /^#{2,4} /.test(line) && line.includes(`\`${action}\``));
  if (start < 0) return "";
  const paragraph: string[] = [];
  let inCode = false;
  for (const line of lines.slice(start + 1)) {
    if (/^#{1,4} /.test(line)) break;
    if (line.startsWith("```")) {
      inCode = !inCode;
      continue;
    }
    if (inCode || line.startsWith("|")) continue;
    if (line.trim() === "") {
      if (paragraph.length > 0) break;
      continue;
    }
    // A list item starts a new line; its continuation lines join it.
    if (/^\s*- /.test(line) || paragraph.length === 0) paragraph.push(line.trim());
    else paragraph[paragraph.length - 1] += ` ${line.trim()}`;
  }
  const text = paragraph.join("\n");
  if (text.length <= MAX_RULES_CHARS) return text;
  const cut = text.slice(0, MAX_RULES_CHARS);
  const sentence = Math.max(cut.lastIndexOf(". "), cut.lastIndexOf(".\n"));
  return `${sentence > 0 ? cut.slice(0, sentence + 1) : cut} (more in the guide: resource hotline://guide)`;
}
