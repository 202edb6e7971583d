import { describe, expect, it } from "vitest";
import { useDaemon } from "./helpers/daemon.js";

describe("GET / on the daemon's port", () => {
  const t = useDaemon();
  const http = (): string => t.daemon.url.replace(/^ws:/, "http:");

  it("says what this is, how to authenticate and the first request, without a token and naming no secret", async () => {
    const res = await fetch(`${http()}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    const text = await res.text();
    expect(text).toContain("Authorization: Bearer <token>");
    expect(text).toContain('{"id": 1, "action": "state.guide"}');
    expect(text).toContain("/mcp");
    expect(text).not.toContain(t.daemon.token);
    expect(text).not.toContain(t.daemon.dirs.root);
    // The first request it names works as written.
    const guide = await t.client.ok("state.guide");
    expect(guide.text.length).toBeGreaterThan(1000);
  });

  it("still answers other paths 426 (WebSocket only), pointing at GET /", async () => {
    const res = await fetch(`${http()}/elsewhere`);
    expect(res.status).toBe(426);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain("GET /");
    expect((await fetch(`${http()}/`, { method: "POST" })).status).toBe(426);
  });
});
