// @sluice/provider: a provider's layer (bulkhead, limiter, budgets, retries), a call, the two
// waits told apart with catchTag, a refusal whose String starts with its tag, stats and lanes.
import { Provider } from "@sluice/provider"
import { RateLimiterStore } from "@sluice/rate-limiter"
import { Effect, Fiber, Layer } from "effect"
import { check } from "../check.js"

class Geo extends Provider.Tag("consumer4-geo")<Geo>() {}

const GeoLive = Geo.layer({
  bulkhead: { permits: 1, maxWait: "50 millis" },
  rateLimiter: { limit: 100, window: "1 second" },
  attemptTimeout: "100 millis",
  retry: { maxAttempts: 2 }
}).pipe(Layer.provide(RateLimiterStore.layerMemory))

export const checks = Effect.gen(function*() {
  const geo = yield* Geo
  const served = yield* geo.call(Effect.succeed("Lyon"))
  yield* check(served === "Lyon", "a call runs through the provider", served)

  // too slow: every attempt overruns its budget, the last failure is the provider's CallTimeout
  const slow = yield* geo.call(Effect.sleep("1 second")).pipe(
    Effect.as("served"),
    Effect.catchTag("CallTimeout", (error) => Effect.succeed(String(error)))
  )
  yield* check(slow.startsWith("CallTimeout: "), "a call past its attempt budget is a CallTimeout", slow)

  // queued too long: one permit held, the next caller gives up after its 50 ms
  const holder = yield* Effect.forkChild(geo.call(Effect.sleep("80 millis")))
  yield* Effect.sleep("5 millis")
  const queued = yield* geo.call(Effect.succeed("late")).pipe(
    Effect.catchTag("PermitWaitTimeout", (error) => Effect.succeed(String(error)))
  )
  yield* check(queued.startsWith("PermitWaitTimeout: "), "a caller queued past its budget is told so", queued)
  yield* Fiber.join(holder)

  const laned = yield* geo.call(Effect.succeed(1)).pipe(Provider.withLane("interactive"))
  yield* check(laned === 1, "a call under withLane runs (no lanes declared: the default lane)", laned)
  const stats = yield* geo.stats
  yield* check(stats.inFlight === 0 && stats.calls >= 5, "stats count the calls, nothing left in flight", stats)
}).pipe(Effect.provide(GeoLive))
