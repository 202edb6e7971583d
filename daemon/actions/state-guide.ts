import { stateGuide } from "../../protocol/actions/state-guide.js";
import { ActionError } from "../../protocol/errors.js";
import type { Guide, GuideText } from "../build-info.js";
import { entry } from "./context.js";

/** The text `section` names: core (the default), all, a section, or the section documenting an action. */
function pick(guide: Guide, section: string): GuideText & { name: string } {
  if (section === "core") return { name: "core", ...guide.core };
  if (section === "all") return { name: "all", ...guide.all };
  const found = guide.sections.find((s) => s.name === section) ?? guide.sections.find((s) => s.actions.includes(section));
  if (found) return found;
  const names = ["core", "all", ...guide.sections.map((s) => s.name)];
  throw new ActionError(
    "invalid_request",
    `state.guide: no guide section ${JSON.stringify(section)}; sections are ${names.join(", ")} (or an action name, e.g. "files.write")`,
    { path: "/section", details: { sections: names } },
  );
}

export default entry(stateGuide, async (params, { services }) => {
  const { guide } = services;
  const chosen = pick(guide, params.section ?? "core");
  return {
    version: guide.version,
    section: chosen.name,
    sha256: chosen.sha256,
    text: chosen.text,
    sections: guide.sections.map((s) => ({ name: s.name, title: s.title, bytes: Buffer.byteLength(s.text), actions: s.actions })),
  };
});
