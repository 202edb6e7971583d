import type { Command } from "../command.js";
import { EXIT } from "../exit-codes.js";
import { parseDuration } from "./core.js";
import { printResult } from "./print.js";

type Listener = { port: number; address: string; pid?: number; command?: string; job?: string };

/** `hotline ports`: the TCP ports listening in the sandbox, with their process and job. */
const ports: Command = async ({ client, json }) => {
  const { ports: list } = await client.request<{ ports: Listener[] }>("ports.list", {});
  printResult({ ports: list }, json, () =>
    list.length
      ? list
          .map(
            (p) =>
              `${String(p.port).padEnd(6)} ${p.address.padEnd(16)} ${String(p.pid ?? "-").padEnd(8)} ${(p.job ?? "-").padEnd(20)} ${p.command ?? ""}`,
          )
          .join("\n")
      : "nothing listens in the sandbox",
  );
  return 0;
};

/** `hotline preview PORT [--ttl 1h]`: prints a short-lived link to the server on PORT. */
const preview: Command = async ({ client, args, flags, json }) => {
  const port = Number(args[0]);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    process.stderr.write("usage: hotline preview PORT [--ttl 15m]\n");
    return EXIT.usage;
  }
  const params: Record<string, unknown> = { port };
  if (typeof flags.ttl === "string") params.ttlMs = parseDuration(flags.ttl);
  const opened = await client.request<
    { available: true; url: string; expiresAt: string; listening: boolean } | { available: false; reason: string }
  >("preview.open", params);
  printResult(opened, json, () =>
    opened.available
      ? `${opened.url}\n(expires ${opened.expiresAt}${opened.listening ? "" : `; nothing listens on port ${port} yet: the page waits for it`})`
      : `no preview here: ${opened.reason}`,
  );
  return opened.available ? 0 : EXIT.other;
};

export const previewCommands: Record<string, Command> = { ports, preview };
