// Small readers for the image's own file formats, shared by the image tests.

/** One Dockerfile instruction with its continuation lines joined. */
export interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

/** Parses a Dockerfile into instructions: comments dropped (also inside continuations), `\` lines joined. */
export function parseDockerfile(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending: { parts: string[]; line: number } | undefined;
  text.split("\n").forEach((raw, index) => {
    const trimmed = raw.trim();
    if (trimmed.startsWith("#") || (trimmed === "" && !pending)) return;
    const continues = trimmed.endsWith("\\");
    const part = continues ? trimmed.slice(0, -1).trim() : trimmed;
    if (pending) pending.parts.push(part);
    else pending = { parts: [part], line: index + 1 };
    if (continues) return;
    const joined = pending.parts.filter(Boolean).join(" ");
    const space = joined.search(/\s/);
    out.push({
      keyword: (space < 0 ? joined : joined.slice(0, space)).toUpperCase(),
      args: space < 0 ? "" : joined.slice(space + 1).trim(),
      line: pending.line,
    });
    pending = undefined;
  });
  if (pending) throw new Error(`Dockerfile ends inside a continued instruction (line ${pending.line})`);
  return out;
}

/** Parses supervisord's INI dialect: [sections], key=value, ';' or '#' comments at line start. */
export function parseIni(text: string): Array<[string, Record<string, string>]> {
  const sections: Array<[string, Record<string, string>]> = [];
  let current: Record<string, string> | undefined;
  text.split("\n").forEach((raw, index) => {
    const line = raw.trim();
    if (line === "" || line.startsWith(";") || line.startsWith("#")) return;
    const header = /^\[([^\]]+)\]$/.exec(line);
    if (header) {
      current = {};
      sections.push([header[1], current]);
      return;
    }
    const eq = line.indexOf("=");
    if (!current || eq < 1) throw new Error(`line ${index + 1} is neither a [section] nor key=value: ${raw}`);
    const key = line.slice(0, eq).trim();
    if (key in current) throw new Error(`line ${index + 1}: ${key} is set twice in one section`);
    current[key] = line.slice(eq + 1).trim();
  });
  return sections;
}

/** Lines of a list file with `#` comments and blank lines removed. */
export function readListFile(text: string): string[] {
  return text
    .split("\n")
    .map((l) => l.replace(/#.*/, "").trim())
    .filter(Boolean);
}
