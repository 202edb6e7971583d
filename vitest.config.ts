import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "daemon/**/*.test.ts", "protocol/**/*.test.ts", "cli/**/*.test.ts", "image/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Fails a test during which a daemon it started stalled its event loop (the watchdog).
    setupFiles: ["test/helpers/watchdog-setup.ts"],
    reporters: ["default"],
  },
});
