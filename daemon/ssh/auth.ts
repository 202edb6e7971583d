import type { Scope } from "../../protocol/define.js";
import type { TokenStore } from "../tokens/store.js";

/** Refused credentials from one source logged one by one per window; past that, one line says more came. */
export const FAILURES_PER_WINDOW = 20;
export const FAILURE_WINDOW_MS = 60_000;
/** Every refusal answers this long after the attempt began, whatever the reason, so timing tells nothing. */
export const REFUSAL_DELAY_MS = 250;
/** Wrong user names one connection may present before it is closed (as OpenSSH's MaxAuthTries, 6). */
export const MAX_NAMES_PER_CONNECTION = 6;
/** Sources the log remembers at most (a flood of addresses cannot grow it without bound). */
const MAX_TRACKED_SOURCES = 4096;

/** How a refused credential is logged: on its own line, as the first past the allowance, or not at all. */
export type RefusalNote = "log" | "first-unlogged" | "quiet";

/**
 * Counts refused credentials per source in fixed windows, to keep the log bounded: the first
 * FAILURES_PER_WINDOW of a window are logged one by one, then one line says more came. It refuses
 * nobody: a source's failures never keep a good credential out (every local client, and every
 * client behind a provider's forward, shares an address with whoever fails), and guessing needs
 * no limit to stay hopeless, as a credential is 256 random bits.
 */
export class RefusalLog {
  private readonly failures = new Map<string, { count: number; since: number }>();

  constructor(
    private readonly allowance = FAILURES_PER_WINDOW,
    private readonly windowMs = FAILURE_WINDOW_MS,
  ) {}

  /** Notes one refused credential from `source`, and says how to log it. */
  failed(source: string, now = Date.now()): RefusalNote {
    const entry = this.failures.get(source);
    if (entry && now - entry.since < this.windowMs) {
      entry.count++;
      return entry.count <= this.allowance ? "log" : entry.count === this.allowance + 1 ? "first-unlogged" : "quiet";
    }
    if (this.failures.size >= MAX_TRACKED_SOURCES) this.forgetExpired(now);
    if (this.failures.size >= MAX_TRACKED_SOURCES) this.failures.delete(this.failures.keys().next().value!);
    this.failures.set(source, { count: 1, since: now });
    return "log";
  }

  private forgetExpired(now: number): void {
    for (const [source, entry] of this.failures) if (now - entry.since >= this.windowMs) this.failures.delete(source);
  }
}

/** What a presented SSH user name is worth: the token it names, or why it is refused. */
export type SshCredential = { ok: true; tokenId: string; scope: Scope } | { ok: false; reason: "wrong" | "expired" | "missing" };

/** Checks a user name as an `ssh`-use token of manage scope. */
export function checkCredential(tokens: TokenStore, user: string): SshCredential {
  const check = tokens.check(user, Date.now(), "ssh");
  if (check.ok && check.scope === "manage") return { ok: true, tokenId: check.id, scope: check.scope };
  return { ok: false, reason: check.ok ? "wrong" : check.reason };
}
