import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

// the ESM entries, as the test files import them
const resolve = (name: string) => fileURLToPath(import.meta.resolve(name))

export default defineConfig({
  test: {
    projects: [
      "packages/*/vitest.config.ts",
      "examples/*/vitest.config.ts",
      {
        test: { name: "effect4", include: ["test/**/*.test.ts"], sequence: { concurrent: true } }
      },
      {
        // The core's own tests, under this workspace's Node and vitest: they import only vitest
        // and fast-check, resolved here rather than from the root's node_modules.
        resolve: {
          alias: [
            { find: /^vitest$/, replacement: resolve("vitest") },
            { find: /^fast-check$/, replacement: resolve("fast-check") }
          ]
        },
        test: { name: "core", root: "../core", include: ["test/**/*.test.ts"], sequence: { concurrent: true } }
      }
    ]
  }
})
