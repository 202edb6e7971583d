import type { Scope } from "../../protocol/define.js";
import type { TokenStore } from "../tokens/store.js";

/** Failed credentials one source address may present per window before it is refused outright. */
export const FAILURES_PER_WINDOW = 20;
export const FAILURE_WINDOW_MS = 60_000;
/** Every refusal answers this long after the attempt began, whatever the reason, so timing tells nothing. */
export const REFUSAL_DELAY_MS = 250;
/** Source addresses the limiter remembers at most (a flood of addresses cannot grow it without bound). */
const MAX_TRACKED_ADDRESSES = 4096;

/**
 * Counts failed credentials per source address in fixed windows; an address past its allowance is
 * refused, even with a good credential, until its window ends.
 */
export class RefusalLimiter {
  private readonly failures = new Map<string, { count: number; since: number }>();

  constructor(
    private readonly allowance = FAILURES_PER_WINDOW,
    private readonly windowMs = FAILURE_WINDOW_MS,
  ) {}

  /** Whether `address` may try a credential now. */
  allows(address: string, now = Date.now()): boolean {
    const entry = this.failures.get(address);
    if (!entry || now - entry.since >= this.windowMs) return true;
    return entry.count < this.allowance;
  }

  /** Notes one failed credential from `address`. */
  failed(address: string, now = Date.now()): void {
    const entry = this.failures.get(address);
    if (entry && now - entry.since < this.windowMs) {
      entry.count++;
      return;
    }
    if (this.failures.size >= MAX_TRACKED_ADDRESSES) this.forgetExpired(now);
    if (this.failures.size >= MAX_TRACKED_ADDRESSES) this.failures.delete(this.failures.keys().next().value!);
    this.failures.set(address, { count: 1, since: now });
  }

  private forgetExpired(now: number): void {
    for (const [address, entry] of this.failures) if (now - entry.since >= this.windowMs) this.failures.delete(address);
  }
}

/** What a presented SSH user name is worth: the token it names, or why it is refused. */
export type SshCredential =
  | { ok: true; tokenId: string; scope: Scope }
  | { ok: false; reason: "wrong" | "expired" | "missing" | "rate_limited" };

/** Checks a user name as an `ssh`-use token, for one source address under the limiter. */
export function checkCredential(tokens: TokenStore, limiter: RefusalLimiter, user: string, address: string): SshCredential {
  if (!limiter.allows(address)) return { ok: false, reason: "rate_limited" };
  const check = tokens.check(user, Date.now(), "ssh");
  if (check.ok && check.scope === "manage") return { ok: true, tokenId: check.id, scope: check.scope };
  limiter.failed(address);
  return { ok: false, reason: check.ok ? "wrong" : check.reason };
}
