import { defineConfig } from "vitest/config"

export default defineConfig({
  test: { name: "@sluice/provider", include: ["test/**/*.test.ts"], sequence: { concurrent: true } }
})
