import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { GuideParts, GuideSection } from "./guide.js";

export interface BuildInfo {
  version: string;
  commit: string;
}

/** One text state.guide serves: sha256 is over its exact UTF-8 bytes. */
export interface GuideText {
  sha256: string;
  text: string;
}

/** The guide embedded in this build, split as state.guide serves it (see daemon/guide.ts). */
export interface Guide {
  version: string;
  core: GuideText;
  all: GuideText;
  sections: Array<GuideText & Omit<GuideSection, "text">>;
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

const sha256 = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex");
const served = (text: string): GuideText => ({ sha256: sha256(text), text });

/** The guide embedded in this build (dist/guide/guide.json), each text with the SHA-256 of its bytes. */
export function loadGuide(build: BuildInfo): Guide {
  const parts = JSON.parse(readFileSync(fileURLToPath(new URL("guide/guide.json", distRoot)), "utf8")) as GuideParts;
  return {
    version: build.version,
    core: served(parts.core),
    all: served(parts.all),
    sections: parts.sections.map((s) => ({ ...s, ...served(s.text) })),
  };
}
