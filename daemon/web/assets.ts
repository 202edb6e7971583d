import { readFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** Where the build (scripts/build.mjs) puts the pages: dist/web, beside dist/daemon. */
const WEB_DIR = fileURLToPath(new URL("../../web/", import.meta.url));

const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
};

/** Every file a page may ask for; nothing else under dist/web is ever read from a request. */
export const PAGE_FILES = [
  "terminal.html",
  "console.html",
  "terminal.js",
  "console.js",
  "page.css",
  "xterm.css",
  "desktop.html",
  "desktop.js",
] as const;
export type PageFile = (typeof PAGE_FILES)[number];

/** The built page files, read once each on first request (they are small and never change under a running daemon). */
export class PageAssets {
  private readonly cache = new Map<PageFile, Promise<Buffer>>();
  private allPresent = false;

  constructor(private readonly dir = WEB_DIR) {}

  /** Why the pages cannot be served (a build without them), or undefined when they can. */
  missing(): string | undefined {
    // Asked on every terminal.open/console.open: once every file is there, it stays there.
    if (this.allPresent) return undefined;
    const absent = PAGE_FILES.filter((f) => !existsSync(`${this.dir}${f}`));
    this.allPresent = absent.length === 0;
    return absent.length ? `the browser pages are not built (${absent.join(", ")} missing in ${this.dir}); run npm run build` : undefined;
  }

  read(file: PageFile): Promise<Buffer> {
    let body = this.cache.get(file);
    if (!body) {
      body = readFile(`${this.dir}${file}`);
      body.catch(() => this.cache.delete(file));
      this.cache.set(file, body);
    }
    return body;
  }

  static contentType(file: PageFile): string {
    return TYPES[file.slice(file.lastIndexOf(".") + 1)]!;
  }
}
