import { defineConfig } from "vitest/config"

export default defineConfig({
  test: { name: "@sluice/rate-limiter", include: ["test/**/*.test.ts"], sequence: { concurrent: true } }
})
