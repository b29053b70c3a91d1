import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    name: "@sluice/bulkhead-redis",
    include: ["test/**/*.test.ts"],
    sequence: { concurrent: true },
    // A real redis-server on a free loopback port (and a failed run if there is none), its URL
    // given to the tests as inject("redisUrl"); the Cluster tests start their own cluster.
    globalSetup: ["./test/redisGlobalSetup.ts"],
    // One file at a time: a Cluster is six redis-server processes on a shared machine.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
