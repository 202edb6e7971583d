import { writeFile } from "node:fs/promises";
import type { Command } from "../command.js";
import { EXIT } from "../exit-codes.js";
import { printResult } from "./print.js";

/** `hotline screenshot -o FILE`: the desktop as PNG (or JPEG), written atomically enough for a file a person opens. */
const screenshot: Command = async ({ client, flags, json }) => {
  const out = typeof flags.output === "string" ? flags.output : undefined;
  if (!out) {
    process.stderr.write("usage: hotline screenshot -o FILE [--max-width N] [--max-height N] [--format png|jpeg] [--quality Q]\n");
    return EXIT.usage;
  }
  const params: Record<string, unknown> = {};
  for (const [flag, key] of [
    ["max-width", "maxWidth"],
    ["max-height", "maxHeight"],
    ["quality", "quality"],
  ] as const)
    if (typeof flags[flag] === "string") params[key] = Number(flags[flag]);
  if (typeof flags.format === "string") params.format = flags.format;
  const shot = await client.request<{
    data: string;
    width: number;
    height: number;
    scale: number;
    format: string;
    screen: { width: number; height: number };
  }>("desktop.screenshot", params);
  await writeFile(out, Buffer.from(shot.data, "base64"));
  const { data: _data, ...summary } = shot;
  printResult(
    summary,
    json,
    () =>
      `${out}: ${shot.format} ${shot.width}x${shot.height} of the ${shot.screen.width}x${shot.screen.height} screen (scale ${shot.scale})`,
  );
  return 0;
};

/** `hotline desktop [--scope observe]`: prints a link to the desktop in a browser, with this CLI token's scope or a lower one. */
const desktop: Command = async ({ client, json, flags }) => {
  const opened = await client.request<
    { available: true; desktopUrl: string; expiresAt: string; scope: string } | { available: false; reason: string }
  >("desktop.open", typeof flags.scope === "string" ? { scope: flags.scope } : {});
  printResult(opened, json, () =>
    opened.available ? `${opened.desktopUrl}\n(${opened.scope} link, expires ${opened.expiresAt})` : `no desktop here: ${opened.reason}`,
  );
  return opened.available ? 0 : EXIT.other;
};

export const desktopCommands: Record<string, Command> = { screenshot, desktop };
