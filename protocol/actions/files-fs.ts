import { Type, type Static } from "@sinclair/typebox";
import { defineAction } from "../define.js";
import { AbsolutePath, Encoding } from "../common.js";

/**
 * The filesystem actions (files.read … files.unwatch): exact bytes without a shell. All need the
 * manage scope; the daemon's own config, state and cache directories are refused whatever the scope.
 */

/** Largest reply of files.read, the same budget as jobs.output. */
export const FILE_READ_MAX_LIMIT = 4 * 1024 * 1024;
/** Raw bytes per files.write chunk the guide recommends: base64 of it stays well under a 1 MiB frame. */
export const FILE_WRITE_CHUNK_BYTES = 512 * 1024;

const Sha256 = Type.String({ pattern: "^[0-9a-f]{64}$", description: "lowercase hex SHA-256 of the whole file" });
/** Permission bits as an octal string, e.g. "0644" or "755". */
export const FileMode = Type.String({ pattern: "^0?[0-7]{3,4}$", description: 'octal permission bits, e.g. "0644"' });
const IfMatch = Type.Union([Sha256, Type.Literal("absent")], {
  description: 'write only if the file\'s current SHA-256 is this, or "absent": only if it does not exist',
});
const Size = Type.Integer({ minimum: 0 });
const Mtime = Type.String({ description: "ISO 8601 modification time" });

export const FileType = Type.Union([
  Type.Literal("file"),
  Type.Literal("directory"),
  Type.Literal("symlink"),
  Type.Literal("fifo"),
  Type.Literal("socket"),
  Type.Literal("device"),
  Type.Literal("other"),
]);
export type FileType = Static<typeof FileType>;

/** One directory entry or stat result; a symbolic link is described itself, with its `target`. */
export const FileEntry = Type.Object({
  name: Type.String(),
  path: Type.String(),
  type: FileType,
  size: Size,
  mode: Type.String({ description: 'octal permission bits, e.g. "0644"' }),
  mtime: Mtime,
  target: Type.Optional(Type.String({ description: "a symbolic link's target as stored" })),
});
export type FileEntry = Static<typeof FileEntry>;

export const filesRead = defineAction({
  name: "files.read",
  scope: "manage",
  summary:
    "Bytes of a regular file from an offset (at most 4 MiB a reply), with size, mtime, and the whole file's SHA-256 on the reply that reaches the end (files over 64 MiB: when asked).",
  params: Type.Object(
    {
      path: AbsolutePath,
      offset: Type.Optional(Size),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: FILE_READ_MAX_LIMIT })),
      encoding: Type.Optional(Encoding),
      binary: Type.Optional(Type.Boolean({ description: "send the bytes raw in a binary frame right after the reply" })),
      sha256: Type.Optional(
        Type.Boolean({ description: "the whole file's SHA-256 on the reply reaching the end: true whatever the size, false never" }),
      ),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    data: Type.String({ description: 'the bytes as text or base64; "" with encoding "binary"' }),
    encoding: Type.Union([Encoding, Type.Literal("binary")]),
    size: Size,
    mtime: Mtime,
    offset: Size,
    next: Type.Integer({ minimum: 0, description: "the offset to ask for next" }),
    eof: Type.Boolean(),
    sha256: Type.Optional(Sha256),
  }),
});

export const filesWrite = defineAction({
  name: "files.write",
  scope: "manage",
  summary:
    "Replace a file atomically (temporary sibling + rename), optionally only if its SHA-256 matches; large content in chunks under an upload id.",
  params: Type.Object(
    {
      path: AbsolutePath,
      data: Type.String({ maxLength: 64 * 1024 * 1024 }),
      encoding: Type.Optional(Encoding),
      mode: Type.Optional(FileMode),
      parents: Type.Optional(Type.Boolean()),
      ifMatch: Type.Optional(IfMatch),
      upload: Type.Optional(Type.String({ pattern: "^u[0-9a-f]{16}$", description: "the id the first chunk's reply gave" })),
      offset: Type.Optional(Size),
      final: Type.Optional(Type.Boolean({ description: "false: more chunks follow (default true)" })),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    path: Type.String(),
    done: Type.Boolean({ description: "true once the file is published" }),
    received: Size,
    upload: Type.Optional(Type.String()),
    size: Type.Optional(Size),
    sha256: Type.Optional(Sha256),
    mtime: Type.Optional(Mtime),
  }),
});

export const filesEdit = defineAction({
  name: "files.edit",
  scope: "manage",
  summary:
    "Exact search/replace in a UTF-8 file: each `old` must occur exactly `count` times (default 1) or nothing is written; atomic like files.write.",
  params: Type.Object(
    {
      path: AbsolutePath,
      edits: Type.Array(
        Type.Object(
          {
            old: Type.String({ minLength: 1, maxLength: 1024 * 1024 }),
            new: Type.String({ maxLength: 1024 * 1024 }),
            count: Type.Optional(Type.Integer({ minimum: 1, maximum: 100000 })),
          },
          { additionalProperties: false },
        ),
        { minItems: 1, maxItems: 1000 },
      ),
      ifMatch: Type.Optional(Sha256),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({ path: Type.String(), replacements: Size, size: Size, sha256: Sha256, mtime: Mtime }),
});

export const filesList = defineAction({
  name: "files.list",
  scope: "manage",
  summary: "Entries of a directory (to a depth), sorted by path, optionally filtered by a glob and the repository's ignore rules.",
  params: Type.Object(
    {
      path: AbsolutePath,
      depth: Type.Optional(Type.Integer({ minimum: 1, maximum: 32 })),
      glob: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
      hidden: Type.Optional(Type.Boolean()),
      gitignore: Type.Optional(Type.Boolean()),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10000 })),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({ entries: Type.Array(FileEntry), more: Type.Boolean() }),
});

export const filesStat = defineAction({
  name: "files.stat",
  scope: "manage",
  summary: "One path's type, size, mode and mtime (a symbolic link itself, with its target).",
  params: Type.Object({ path: AbsolutePath }, { additionalProperties: false }),
  result: FileEntry,
});

export const filesMkdir = defineAction({
  name: "files.mkdir",
  scope: "manage",
  summary: "Create a directory (and its missing parents with parents: true); an existing directory is fine.",
  params: Type.Object(
    { path: AbsolutePath, parents: Type.Optional(Type.Boolean()), mode: Type.Optional(FileMode) },
    { additionalProperties: false },
  ),
  result: Type.Object({ path: Type.String(), created: Type.Boolean() }),
});

export const filesMove = defineAction({
  name: "files.move",
  scope: "manage",
  summary: "Rename a file, directory or link (the link itself) within one filesystem; an existing destination needs overwrite: true.",
  params: Type.Object({ from: AbsolutePath, to: AbsolutePath, overwrite: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
  result: Type.Object({ from: Type.String(), to: Type.String() }),
});

export const filesRemove = defineAction({
  name: "files.remove",
  scope: "manage",
  summary: "Remove a file, a link (never its target) or, with recursive: true, a directory tree.",
  params: Type.Object({ path: AbsolutePath, recursive: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
  result: Type.Object({ path: Type.String(), type: FileType }),
});

export const SearchMatch = Type.Object({
  path: Type.String(),
  line: Type.Integer({ minimum: 1 }),
  column: Type.Integer({ minimum: 1 }),
  text: Type.String({ description: "the matching line, cut at 500 characters" }),
});

export const filesSearch = defineAction({
  name: "files.search",
  scope: "manage",
  summary: "Lines matching a fixed string (or an extended regex) under a directory, with git grep; bounded in results and time.",
  params: Type.Object(
    {
      path: AbsolutePath,
      pattern: Type.String({ minLength: 1, maxLength: 4096 }),
      regex: Type.Optional(Type.Boolean()),
      glob: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
      maxResults: Type.Optional(Type.Integer({ minimum: 1, maximum: 10000 })),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({ matches: Type.Array(SearchMatch), more: Type.Boolean(), timedOut: Type.Boolean() }),
});

export const filesWatch = defineAction({
  name: "files.watch",
  scope: "manage",
  summary: "fs.change events for a file or directory (recursive: the whole tree) on this connection until files.unwatch.",
  params: Type.Object({ path: AbsolutePath, recursive: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
  result: Type.Object({ watch: Type.String(), path: Type.String() }),
});

export const filesUnwatch = defineAction({
  name: "files.unwatch",
  scope: "manage",
  summary: "Stop a files.watch on this connection.",
  params: Type.Object({ watch: Type.String({ pattern: "^w[0-9a-f]{16}$" }) }, { additionalProperties: false }),
  result: Type.Object({ watched: Type.Boolean() }),
});

export const FS_ACTIONS = [
  filesRead,
  filesWrite,
  filesEdit,
  filesList,
  filesStat,
  filesMkdir,
  filesMove,
  filesRemove,
  filesSearch,
  filesWatch,
  filesUnwatch,
] as const;
