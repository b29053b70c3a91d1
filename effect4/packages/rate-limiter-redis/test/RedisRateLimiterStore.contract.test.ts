/**
 * The store contract's vectors against a real Redis, with the caller's clock (TestClock) injected
 * into the Lua scripts: every decision must match the memory store's to the microsecond. The
 * driver is the rate limiter's (`effect4/packages/rate-limiter/test/contract/driver.ts`).
 */
import { RedisRateLimiterStore } from "@sluice/rate-limiter-redis"
import { inject } from "vitest"
import { storeVectors } from "../../rate-limiter/test/contract/driver.js"

// The driver waits for each taker's decision to come back from Redis before it moves the
// TestClock; the package's tests run one at a time (no concurrent sequence in its config), which
// keeps this file's load on Redis and the two cores low.
storeVectors(
  "redis (client clock)",
  RedisRateLimiterStore.layer({
    url: inject("redisUrl"),
    prefix: `contract-${globalThis.crypto.randomUUID().slice(0, 8)}:`,
    clock: "client"
  })
)
