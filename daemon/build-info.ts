import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export interface BuildInfo {
  version: string;
  commit: string;
}

export interface Guide {
  version: string;
  sha256: string;
  text: string;
}

const distRoot = new URL("../", import.meta.url);

/** Version and git commit written by scripts/build.mjs into dist/build-info.json. */
export function loadBuildInfo(): BuildInfo {
  try {
    return JSON.parse(readFileSync(new URL("build-info.json", distRoot), "utf8")) as BuildInfo;
  } catch {
    return { version: "0.0.0-dev", commit: "unknown" };
  }
}

/** The guide embedded in this build; sha256 is over the exact bytes returned. */
export function loadGuide(build: BuildInfo): Guide {
  const text = readFileSync(fileURLToPath(new URL("guide/guide.md", distRoot)), "utf8");
  return { version: build.version, sha256: createHash("sha256").update(text, "utf8").digest("hex"), text };
}
