import { randomBytes } from "node:crypto";
import { basename, dirname, join } from "node:path";
import { ActionError } from "../../protocol/errors.js";

/**
 * Names for the hidden temporary sibling a download or extraction is written to before it is
 * renamed into place. The temp name adds a prefix and a suffix to the destination's name, so a
 * destination name near the 255-byte limit would overflow it (ENAMETOOLONG): the copied part of
 * the name is shortened instead, and a destination name over the limit is refused up front.
 */

/** Linux NAME_MAX: the longest file name, in bytes. */
export const NAME_MAX = 255;

/** Refuses a path whose last component is longer than NAME_MAX bytes; `field` is the JSON Pointer named. */
export function requireNameFits(path: string, field: string): void {
  const name = basename(path);
  const bytes = Buffer.byteLength(name);
  if (bytes > NAME_MAX) {
    throw new ActionError(
      "invalid_request",
      `the name ${JSON.stringify(`${name.slice(0, 40)}…`)} in ${field} is ${bytes} bytes long; file names may have at most ${NAME_MAX} bytes — choose a shorter one`,
      { path: field },
    );
  }
}

/** `.<name>.<random>.<suffix>` beside `path`, with `<name>` cut so the whole stays within NAME_MAX. */
export function tempSibling(path: string, suffix: string): string {
  const tail = `.${randomBytes(6).toString("hex")}.${suffix}`;
  let name = basename(path);
  while (Buffer.byteLength(name) > NAME_MAX - 1 - tail.length) name = name.slice(0, -1);
  return join(dirname(path), `.${name}${tail}`);
}
