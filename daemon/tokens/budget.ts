import type { Scope } from "../../protocol/define.js";
import { ActionError } from "../../protocol/errors.js";
import type { IssuedToken } from "./records.js";

/**
 * Of the live tokens, what observe tokens may hold (links they opened, and what those issued): at
 * most a quarter in all and a fiftieth each, so observers can never use up the room manage needs,
 * nor one observer everybody else's share.
 */
const OBSERVE_SHARE = 1 / 4;
const OBSERVE_ISSUER_SHARE = 1 / 50;

/** Throws limit_exceeded when the table, the observers' share of it, or this observer's share is full. */
export function checkBudget(live: IssuedToken[], maxLive: number, issuer: string | undefined, issuerScope: Scope): void {
  const full = (count: number, what: string): ActionError =>
    new ActionError(
      "limit_exceeded",
      `${count} ${what} are live, the most the daemon keeps; revoke some (tokens.list, tokens.revoke) or wait for them to expire`,
    );
  if (live.length >= maxLive) throw full(live.length, "issued tokens");
  if (issuerScope !== "observe") return;
  const observers = new Set(live.filter((t) => t.scope === "observe").map((t) => t.id));
  const byObservers = live.filter((t) => t.issuer !== undefined && observers.has(t.issuer));
  const mine = byObservers.filter((t) => t.issuer === issuer).length;
  const perIssuer = Math.max(1, Math.floor(maxLive * OBSERVE_ISSUER_SHARE));
  if (mine >= perIssuer) throw full(mine, `tokens issued by token ${issuer} (an observe token)`);
  const share = Math.max(1, Math.floor(maxLive * OBSERVE_SHARE));
  if (byObservers.length >= share) throw full(byObservers.length, "tokens issued by observe tokens");
}
