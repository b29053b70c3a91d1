import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    name: "@sluice/rate-limiter-redis",
    include: ["test/**/*.test.ts"],
    // A real redis-server on a free loopback port (and a failed run if there is none), its URL
    // given to the tests as inject("redisUrl"); the Cluster tests start their own cluster.
    globalSetup: ["./test/redisGlobalSetup.ts"],
    // One file at a time: the contract vectors must not move the TestClock before a Redis reply is
    // back, and a Cluster is six redis-server processes on a shared machine.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
