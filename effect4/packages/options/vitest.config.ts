import { defineConfig } from "vitest/config"

export default defineConfig({
  test: { name: "@sluice/options", include: ["test/**/*.test.ts"], sequence: { concurrent: true } }
})
