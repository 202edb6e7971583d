import { describe, expect, it, vi } from "vitest";
import { HandshakePacer, sourceOf } from "./pacer.js";

describe("sourceOf", () => {
  it("counts an IPv4 address (also IPv4-mapped) as itself and an IPv6 one by its /64", () => {
    expect(sourceOf("127.0.0.1")).toBe("127.0.0.1");
    expect(sourceOf("::ffff:10.1.2.3")).toBe("10.1.2.3");
    expect(sourceOf("2001:db8:0:1::5")).toBe("2001:db8:0:1::/64");
    expect(sourceOf("2001:db8:0:1:ffff:1:2:3")).toBe("2001:db8:0:1::/64");
    expect(sourceOf("::1")).toBe("0:0:0:0::/64");
  });
});

describe("HandshakePacer", () => {
  it("starts a source's burst at once, the rest in arrival order at its rate; another source is not held up; a withdrawn one never starts", () => {
    vi.useFakeTimers();
    try {
      let now = 0;
      const pacer = new HandshakePacer(2, 10, () => now);
      const started: string[] = [];
      const admit = (address: string, name: string) => pacer.admit(address, () => started.push(name));
      admit("10.0.0.1", "a1");
      admit("10.0.0.1", "a2");
      admit("10.0.0.1", "a3");
      const withdraw = admit("10.0.0.1", "a4");
      admit("10.0.0.1", "a5");
      admit("10.0.0.2", "b1");
      expect(started).toEqual(["a1", "a2", "b1"]);
      expect(pacer.waiting).toBe(3);
      withdraw();
      now += 100;
      vi.advanceTimersByTime(100);
      expect(started).toEqual(["a1", "a2", "b1", "a3"]);
      now += 100;
      vi.advanceTimersByTime(100);
      expect(started).toEqual(["a1", "a2", "b1", "a3", "a5"]);
      expect(pacer.waiting).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
