import { type DecoderFactory, RecordSplitter } from "../repl/index.js";

/** What the bash driver says on its records descriptor (see driver.bash). */
export type SessionRecord =
  | { type: "ready"; pid: number; version: string; cwd: string }
  | { type: "done"; seq: number; status: number; cwd: string };

/** Fields after each record's type. */
const ARITY: Readonly<Record<string, number>> = { ready: 3, done: 3 };
/** A field (a path, at most PATH_MAX) is far shorter than this; a longer one is a broken driver. */
const MAX_FIELD_BYTES = 64 * 1024;

function record(fields: string[]): SessionRecord | undefined {
  const [type, a = "", b = "", cwd = ""] = fields;
  if (type === "ready") return { type, pid: Number(a), version: b, cwd };
  if (type === "done" && /^\d+$/.test(a) && /^\d+$/.test(b)) return { type, seq: Number(a), status: Number(b), cwd };
  return undefined;
}

/** The records decoder: NUL-terminated fields, a type then its fields; anything else is a protocol error. */
export const sessionRecords: DecoderFactory<SessionRecord> = (emit, fail) => {
  let fields: string[] = [];
  return new RecordSplitter(
    0,
    MAX_FIELD_BYTES,
    (field) => {
      fields.push(field.toString("utf8"));
      const arity = ARITY[fields[0]!];
      if (arity === undefined) return fail(new Error(`unknown record type ${JSON.stringify(fields[0]!.slice(0, 40))}`));
      if (fields.length <= arity) return;
      const parsed = record(fields);
      fields = [];
      if (parsed) emit(parsed);
      else fail(new Error(`a malformed ${fields[0]} record`));
    },
    fail,
  );
};
