import { defineConfig } from "vitest/config"

export default defineConfig({
  test: { name: "@sluice/bulkhead", include: ["test/**/*.test.ts"], sequence: { concurrent: true } }
})
