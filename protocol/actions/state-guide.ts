import { Type } from "@sinclair/typebox";
import { defineAction } from "../define.js";

/** A section of the guide as the reply lists it (every one, so a client knows what to ask for). */
const GuideSectionInfo = Type.Object({
  name: Type.String({ description: 'what `section` takes, e.g. "jobs"' }),
  title: Type.String(),
  bytes: Type.Integer({ minimum: 0, description: "UTF-8 bytes of its text" }),
  actions: Type.Array(Type.String(), { description: "the actions it documents under a heading of their own" }),
});

export const stateGuide = defineAction({
  name: "state.guide",
  scope: "observe",
  summary:
    "The agent guide embedded in this build: its compact core by default, or one section (or all of it), with the SHA-256 of the exact text returned.",
  params: Type.Object(
    {
      section: Type.Optional(
        Type.String({
          pattern: "^[a-z][a-z0-9.-]{0,63}$",
          description:
            '"core" (the default: protocol, jobs, common actions, errors and an index of the sections), "all" (the whole guide), a section name from `sections`, or an action name (the section documenting it)',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    version: Type.String(),
    section: Type.String({ description: '"core", "all" or the section name of `text`' }),
    sha256: Type.String({ pattern: "^[0-9a-f]{64}$", description: "SHA-256 of the exact UTF-8 bytes of text" }),
    text: Type.String(),
    sections: Type.Array(GuideSectionInfo),
  }),
});
