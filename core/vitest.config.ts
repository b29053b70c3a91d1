import { defineConfig } from "vitest/config"

// No setup file and no Effect: the core's tests import only vitest and fast-check, so that either
// workspace's vitest can run them.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    sequence: { concurrent: true }
  }
})
