import { defineConfig } from "vitest/config"

export default defineConfig({
  test: { name: "@sluice/http", include: ["test/**/*.test.ts"], sequence: { concurrent: true } }
})
