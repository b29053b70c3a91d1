import { mergeConfig, type ViteUserConfig } from "vitest/config"
import shared from "../../vitest.shared.js"

const config: ViteUserConfig = {
  test: {
    include: ["test/**/*.test.ts"],
    // A real redis-server on a free loopback port (and a failed run if there is none), its URL
    // given to the tests as inject("redisUrl"); the Cluster tests start their own cluster.
    globalSetup: ["@sluice/test-utils/redisGlobalSetup"],
    // One file at a time: a Cluster is six redis-server processes on a shared machine.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
}

export default mergeConfig(shared, config)
