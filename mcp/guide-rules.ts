/** A tool description carries at most this much of the guide (the section is a resource). */
const MAX_RULES_CHARS = 640;

/** Text pointing elsewhere in the guide, which a tool description does not hold. */
const SEE_ELSEWHERE = /\s*\((?:see|as in) [^()]*\)|\s*\((?:above|below)\)|[;,] see [A-Z][\w ]*(?=\))/g;
const ABOVE_BELOW = /\b(?:above|below)\b/i;

/** A sentence as a tool description can carry it, or undefined when it only makes sense beside the guide. */
function standalone(sentence: string): string | undefined {
  const text = sentence.replace(SEE_ELSEWHERE, "");
  if (ABOVE_BELOW.test(text) || /\bsee "/i.test(text)) return undefined;
  // "… listing the conflicting paths:" introduces an example; the sentence stands without it.
  if (text.endsWith(":")) return text.length > 60 ? `${text.slice(0, -1)}.` : undefined;
  return text;
}

/**
 * The heading that documents `action`: of the headings naming it in backticks, the deepest (its own
 * `### \`files.write\`` over a chapter heading that lists several actions).
 */
function headingOf(lines: string[], action: string): number {
  let best = -1;
  let depth = 0;
  lines.forEach((line, i) => {
    const m = /^(#{2,4}) /.exec(line);
    if (m && line.includes(`\`${action}\``) && m[1]!.length > depth) [best, depth] = [i, m[1]!.length];
  });
  return best;
}

/** The prose under a heading up to the next one, as paragraphs and list items (code blocks and tables left out). */
function blocksUnder(lines: string[], start: number): string[] {
  const blocks: string[] = [];
  let current: string[] = [];
  let inCode = false;
  const flush = () => {
    if (current.length) blocks.push(current.join(" "));
    current = [];
  };
  for (const line of lines.slice(start + 1)) {
    if (!inCode && /^#{1,4} /.test(line)) break;
    if (line.startsWith("```")) {
      inCode = !inCode;
      flush();
      continue;
    }
    if (inCode || line.startsWith("|")) continue;
    if (line.trim() === "") flush();
    else if (/^\s*(- |\d+\. )/.test(line)) {
      flush();
      current.push(line.trim());
    } else current.push(line.trim());
  }
  flush();
  return blocks;
}

/** Sentences of a block, each ending in its full stop. */
function sentences(block: string): string[] {
  return block.split(/(?<!\b(?:e\.g|i\.e|etc)\.)(?<=[.!?])\s+(?=[A-Z`*(])/);
}

/**
 * The guide's key rules for one action, for its tool description: the blocks under its heading, in
 * order, while they fit, each cut only at a sentence's end; they end before a sentence that points
 * elsewhere in the guide ("above"), a short line introducing an example, or a block continuing one.
 * "(see …)" asides are dropped, and so is every sentence (or list item) naming one of `omit` in
 * backticks: parameters and actions this transport does not offer.
 * Empty when the guide has no heading naming the action.
 */
export function keyRules(guide: string, action: string, omit: readonly string[] = []): string {
  const names = (text: string) => omit.some((name) => text.includes(`\`${name}\``));
  const lines = guide.split("\n");
  const start = headingOf(lines, action);
  if (start < 0) return "";
  const kept: string[] = [];
  let size = 0;
  for (const block of blocksUnder(lines, start)) {
    // A list item about an option left out goes whole; elsewhere only the sentences naming one.
    if (/^- `/.test(block) && names(block.slice(0, block.indexOf("`", 3) + 1))) continue;
    // A block in lower case continues an example the description does not carry: the rules end there.
    if (/^[a-z]/.test(block)) break;
    const fitting: string[] = [];
    let whole = true;
    for (const sentence of sentences(block)) {
      if (names(sentence)) continue;
      const text = standalone(sentence);
      if (text === undefined || size + text.length + 1 > MAX_RULES_CHARS) {
        whole = false;
        break;
      }
      fitting.push(text);
      size += text.length + 1;
    }
    if (fitting.length) kept.push(fitting.join(" "));
    if (!whole) break;
  }
  return kept.join("\n");
}
