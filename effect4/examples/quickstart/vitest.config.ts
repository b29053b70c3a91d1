import { defineConfig } from "vitest/config"

export default defineConfig({
  test: { name: "@sluice/example-quickstart-effect4", include: ["test/**/*.test.ts"] }
})
