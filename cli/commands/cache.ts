import type { Command } from "../command.js";
import { parseDuration } from "./core.js";
import { printResult } from "./print.js";

interface Listed {
  cacheKey: string;
  packages?: string[];
  flake?: string;
  valid: boolean;
  closureBytes: number | null;
  workspaces: string[];
  lastUsedAt: string;
  publication?: { published: boolean; to: string };
}

const mib = (n: number | null) => (n === null ? "?" : `${(n / 1048576).toFixed(1)} MiB`);

/** One line per entry: key, recipe, size, last use, users — the newest use first. */
function listing(entries: Listed[]): string {
  if (entries.length === 0) return "the environment cache is empty";
  return entries
    .map((e) => {
      const recipe = e.packages ? e.packages.join(" ") : `flake ${e.flake ?? "?"}`;
      const users = e.workspaces.length > 0 ? `used by ${e.workspaces.join(", ")}` : "unused";
      const pushed = e.publication ? (e.publication.published ? `  published to ${e.publication.to}` : "  publish failed") : "";
      return `${e.cacheKey.slice(0, 12)}  ${mib(e.closureBytes).padStart(10)}  ${e.lastUsedAt}  ${e.valid ? "" : "(store path gone) "}${recipe}  ${users}${pushed}`;
    })
    .join("\n");
}

const USAGE = "usage: hotline cache list\n       hotline cache prune [--older-than 7d] [--keep N]";

/** `hotline cache list|prune`: the prepared-environment cache (cache.list / cache.prune). */
const cache: Command = async ({ client, args, flags, json }) => {
  if (args[0] === "list") {
    const { entries } = await client.request<{ entries: Listed[] }>("cache.list", {});
    printResult({ entries }, json, ({ entries }) => listing(entries));
    return 0;
  }
  if (args[0] === "prune") {
    const params: Record<string, unknown> = {};
    if (typeof flags["older-than"] === "string") params.olderThanMs = parseDuration(flags["older-than"]);
    if (typeof flags.keep === "string") {
      if (!/^\d+$/.test(flags.keep)) throw new Error(`bad --keep ${flags.keep}: a count of entries, e.g. --keep 3`);
      params.keep = Number(flags.keep);
    }
    const result = await client.request<{ removed: Array<{ cacheKey: string }>; kept: number }>("cache.prune", params);
    printResult(
      result,
      json,
      (result) =>
        `removed ${result.removed.length} entr${result.removed.length === 1 ? "y" : "ies"}, kept ${result.kept}${result.removed.map((r) => `\n  ${r.cacheKey.slice(0, 12)}`).join("")}`,
    );
    return 0;
  }
  throw new Error(USAGE);
};

export const cacheCommands: Record<string, Command> = { cache };
