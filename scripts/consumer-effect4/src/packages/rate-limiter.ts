// @sluice/rate-limiter: a limiter layer on the memory store, a take, a refusal whose String starts
// with its tag, a reservation settled per dimension, and a limiter decoded from Config.
import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import { ConfigProvider, Effect, Layer } from "effect"
import { check } from "../check.js"

class Geo extends RateLimiter.Tag("geo")<Geo>() {}

const layered = Effect.gen(function*() {
  const geo = yield* Geo
  const served = yield* geo.run(Effect.succeed("Lyon"))
  yield* check(served === "Lyon", "a call runs under the limiter's layer", served)
  // one start per second, the first spent: a caller that will not wait is refused at once
  const refused = yield* Effect.flip(geo.take({ maxWait: 0 }))
  yield* check(refused._tag === "RateLimitExceeded", "a caller past its budget is refused", refused)
  yield* check(String(refused).startsWith("RateLimitExceeded: "), "String(error) starts with its tag", String(refused))
  yield* check(refused instanceof RateLimiter.RateLimitExceeded, "the refusal is the package's class")
}).pipe(Effect.provide(Geo.layer({ limit: 1, window: "1 second" }).pipe(Layer.provide(RateLimiterStore.layerMemory))))

const settled = Effect.gen(function*() {
  const limiter = yield* RateLimiter.make({
    name: "llm",
    limits: [
      { dimension: "requests", limit: 10, window: "1 second", burst: 10 },
      { dimension: "tokens", limit: 1_000, window: "1 second", burst: 1_000 }
    ]
  })
  const reservation = yield* limiter.reserve({ cost: { requests: 1, tokens: 800 } })
  yield* reservation.settle({ tokens: 100 })
  // 800 reserved, 100 used: 700 came back, so 900 fit now
  yield* limiter.take({ cost: { tokens: 900 }, maxWait: 0 })
  const refused = yield* Effect.flip(limiter.take({ cost: { tokens: 100 }, maxWait: 0 }))
  yield* check(
    refused._tag === "RateLimitExceeded" && refused.limit?.dimension === "tokens",
    "a settled reservation gives back what it did not use, per dimension",
    refused
  )
}).pipe(Effect.provide(RateLimiterStore.layerMemory))

const configured = Effect.gen(function*() {
  const geo = yield* Geo
  yield* geo.take()
  const refused = yield* Effect.flip(geo.take({ maxWait: 0 }))
  yield* check(refused._tag === "RateLimitExceeded", "a limiter decoded from Config refuses as configured", refused)
}).pipe(
  Effect.provide(Geo.layerConfig(RateLimiter.config).pipe(Layer.provide(RateLimiterStore.layerMemory))),
  Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ LIMIT: "1", WINDOW: "1 minute" })))
)

export const checks = Effect.andThen(layered, Effect.andThen(settled, configured))
