import { mergeConfig, type ViteUserConfig } from "vitest/config"
import shared from "../../vitest.shared.js"

const config: ViteUserConfig = {
  test: {
    include: ["test/**/*.test.ts"],
    // The Redis packages' shared test setup: a real redis-server on a free loopback port (and a failed
    // run if there is none), its URL given to the tests as inject("redisUrl").
    globalSetup: ["@sluice/test-utils/redisGlobalSetup"],
    // One file at a time: the multi-process tests load every core for seconds.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
}

export default mergeConfig(shared, config)
