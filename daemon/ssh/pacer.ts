import { isIPv6 } from "node:net";

/** Handshakes one source may begin at once, and how many more a second after that. */
export const HANDSHAKE_BURST = 32;
export const HANDSHAKES_PER_SECOND = 32;
/** Sources remembered at most; one with nothing waiting is forgotten first (it merely gets a full allowance again). */
const MAX_SOURCES = 4096;

/** Who a handshake is counted against: its address, an IPv6 one by its /64 (what one host is usually given). */
export function sourceOf(address: string): string {
  if (!isIPv6(address) || address.includes(".")) return address.replace(/^::ffff:/i, "");
  const [head = "", tail = ""] = address.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = address.includes("::") ? [...left, ...Array(8 - left.length - right.length).fill("0"), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g || "0", 16).toString(16))
    .join(":")}::/64`;
}

interface Source {
  tokens: number;
  refilledAt: number;
  waiting: Array<() => void>;
  timer?: NodeJS.Timeout;
}

/**
 * Paces the handshakes each source begins: a token bucket per source (HANDSHAKE_BURST at once,
 * HANDSHAKES_PER_SECOND after), so a stranger cannot make the daemon do key exchanges faster than
 * that. Past its allowance a connection waits, unread, for its turn (in arrival order) rather than
 * being refused: clients sharing the address (every local one, or all behind a provider's forward)
 * are slowed, not turned away. What waits is bounded by the unauthenticated-socket budget.
 */
export class HandshakePacer {
  private readonly sources = new Map<string, Source>();

  constructor(
    private readonly burst = HANDSHAKE_BURST,
    private readonly perSecond = HANDSHAKES_PER_SECOND,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Calls `start` now if the source has a handshake to spare, else in its turn; the returned function withdraws it. */
  admit(address: string, start: () => void): () => void {
    const key = sourceOf(address);
    const source = this.source(key);
    this.refill(source);
    if (source.waiting.length === 0 && source.tokens >= 1) {
      source.tokens--;
      start();
      return () => {};
    }
    source.waiting.push(start);
    this.schedule(key, source);
    return () => {
      const at = source.waiting.indexOf(start);
      if (at >= 0) source.waiting.splice(at, 1);
    };
  }

  /** Connections waiting for their turn, over all sources. */
  get waiting(): number {
    let n = 0;
    for (const source of this.sources.values()) n += source.waiting.length;
    return n;
  }

  private source(key: string): Source {
    let source = this.sources.get(key);
    if (source) return source;
    if (this.sources.size >= MAX_SOURCES) {
      for (const [k, s] of this.sources) if (s.waiting.length === 0) this.sources.delete(k);
    }
    source = { tokens: this.burst, refilledAt: this.now(), waiting: [] };
    this.sources.set(key, source);
    return source;
  }

  private refill(source: Source): void {
    const now = this.now();
    source.tokens = Math.min(this.burst, source.tokens + ((now - source.refilledAt) / 1000) * this.perSecond);
    source.refilledAt = now;
  }

  /** Starts the waiting connections as their tokens come due. */
  private schedule(key: string, source: Source): void {
    if (source.timer) return;
    const dueMs = Math.max(1, Math.ceil(((1 - source.tokens) / this.perSecond) * 1000));
    source.timer = setTimeout(() => {
      source.timer = undefined;
      this.refill(source);
      while (source.waiting.length > 0 && source.tokens >= 1) {
        source.tokens--;
        source.waiting.shift()!();
      }
      if (source.waiting.length > 0) this.schedule(key, source);
      else if (source.tokens >= this.burst) this.sources.delete(key);
    }, dueMs);
    source.timer.unref();
  }
}
