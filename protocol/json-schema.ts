import { Type, type TObject, type TSchema } from "@sinclair/typebox";
import { RequestId, WireErrorSchema } from "./common.js";
import type { ActionDefinition } from "./define.js";
import { EVENTS, FilesDataHeader, JobOutputEvent } from "./events.js";
import { ACTIONS, PROTOCOL_VERSION } from "./index.js";

const DRAFT = "http://json-schema.org/draft-07/schema#";

/** The whole request frame of one action, exactly as the daemon validates it: `id`, `action`, then its flat params. */
export function requestSchema(action: ActionDefinition): TObject {
  return Type.Object(
    { id: Type.Optional(RequestId), action: Type.Literal(action.name), ...action.params.properties },
    { additionalProperties: false },
  );
}

/** A schema as a plain JSON document: TypeBox's symbol keys dropped, `$schema` and a title added. */
function published(title: string, schema: TSchema, description?: string): object {
  const plain = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
  return { $schema: DRAFT, title, ...(description ? { description } : {}), ...plain };
}

/** The header of a binary job.output frame (jobs.follow with binary: true); the raw bytes follow it. */
const BinaryOutputHeader = Type.Object({
  event: Type.Literal("job.output"),
  job: JobOutputEvent.properties.job,
  stream: JobOutputEvent.properties.stream,
  offset: JobOutputEvent.properties.offset,
});

/**
 * Every JSON Schema published in schemas/ (and printed by `hotline schema`), by file path: for
 * clients in other languages. The build writes exactly these files; test/schemas.test.ts checks
 * that the committed directory is what this produces.
 */
export function publishedSchemas(actions: readonly ActionDefinition[] = ACTIONS, protocolVersion = PROTOCOL_VERSION): Map<string, object> {
  const files = new Map<string, object>();
  const names = actions.map((a) => a.name);
  files.set(
    "request.json",
    published(
      "request",
      Type.Object({ id: Type.Optional(RequestId), action: Type.Union(names.map((n) => Type.Literal(n))) }, { additionalProperties: true }),
      "One request frame: `action` and an optional `id`; every other field is a parameter of the action (actions/<action>.params.json).",
    ),
  );
  files.set(
    "reply.json",
    published(
      "reply",
      Type.Union([
        Type.Object({ id: Type.Optional(RequestId), ok: Type.Literal(true), result: Type.Unknown() }, { additionalProperties: false }),
        Type.Object({ id: Type.Optional(RequestId), ok: Type.Literal(false), error: WireErrorSchema }, { additionalProperties: false }),
      ]),
      "One reply frame; `result` is described by actions/<action>.result.json.",
    ),
  );
  files.set("error.json", published("error", WireErrorSchema, "The `error` of a failed reply; `code` is one of the stable error codes."));
  for (const event of EVENTS) files.set(`events/${event.properties.event.const}.json`, published(event.properties.event.const, event));
  files.set(
    "events/job.output.binary-header.json",
    published(
      "job.output binary header",
      BinaryOutputHeader,
      "The JSON header of a binary job.output frame: a 4-byte big-endian length, this header, then the raw bytes.",
    ),
  );
  files.set(
    "events/files.data.binary-header.json",
    published(
      "files.data binary header",
      FilesDataHeader,
      "The JSON header of the binary frame after a files.read with binary: true: a 4-byte big-endian length, this header, then the raw bytes.",
    ),
  );
  for (const action of actions) {
    files.set(`actions/${action.name}.params.json`, published(`${action.name} params`, action.params, action.summary));
    files.set(`actions/${action.name}.result.json`, published(`${action.name} result`, action.result));
    files.set(`actions/${action.name}.request.json`, published(`${action.name} request`, requestSchema(action), action.summary));
  }
  const index = {
    protocolVersion,
    envelope: { request: "request.json", reply: "reply.json", error: "error.json" },
    events: [
      ...EVENTS.map((e) => `events/${e.properties.event.const}.json`),
      "events/job.output.binary-header.json",
      "events/files.data.binary-header.json",
    ],
    actions: actions.map((a) => ({
      name: a.name,
      scope: a.scope,
      summary: a.summary,
      params: `actions/${a.name}.params.json`,
      result: `actions/${a.name}.result.json`,
      request: `actions/${a.name}.request.json`,
    })),
  };
  files.set("index.json", index);
  return files;
}
