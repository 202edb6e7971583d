import type { Scope } from "../../protocol/define.js";
import { ActionError } from "../../protocol/errors.js";

/**
 * The scope of a browser link (console.open, desktop.open, terminal.open): the asking token's by
 * default, a lower one when asked for, never a higher one (`forbidden` at /scope).
 */
export function linkScope(asked: Scope | undefined, asker: Scope): Scope {
  if (asked === undefined || asked === asker) return asker;
  if (asked === "manage")
    throw new ActionError(
      "forbidden",
      `this connection's token has scope ${asker}: a link it asks for has at most that scope; leave out scope or ask for "${asker}"`,
      { path: "/scope" },
    );
  return asked;
}
