/**
 * The rate limiter's store contract, against a real Redis, with the caller's clock (TestClock)
 * injected into the Lua scripts: every decision must match the memory store's to the millisecond.
 */
import { storeContract } from "@sluice/test-utils/storeContract"
import { describe, inject } from "vitest"
import { RedisRateLimiterStore } from "../src/index.js"

// The suite waits for each taker's decision to come back from Redis before it moves the TestClock
// (a fiber awaiting a reply counts as suspended, which is all TestClock.adjust waits for). One test
// at a time keeps this file's load on Redis and the two cores low (see the README, "Testing").
describe.sequential("sequential", () => {
  storeContract(
    "redis (client clock)",
    RedisRateLimiterStore.layer({
      url: inject("redisUrl"),
      prefix: `contract-${globalThis.crypto.randomUUID().slice(0, 8)}:`,
      clock: "client"
    })
  )
})
