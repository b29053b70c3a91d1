import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    projects: ["core/vitest.config.ts", "packages/*/vitest.config.ts", "examples/*/vitest.config.ts"]
  }
})
