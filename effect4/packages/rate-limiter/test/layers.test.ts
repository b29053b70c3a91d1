/**
 * The limiter as a service on Effect 4: its keys and layers, Config, and what layer memoization
 * does to `RateLimiterStore.layerMemory` (RFC 0003 §3): one layer value, so an inner provide of it
 * inside an enclosing provide of it is the same store, and two limiters of one name there share
 * one quota; siblings without a common provide, or `Layer.fresh`, get stores of their own.
 */
import { assert, describe, it } from "@effect/vitest"
import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import { Clock, Config, ConfigProvider, Effect, Exit, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"

/** Runs `effect` with Config read from `entries`, a tree of text. */
const withConfig = (entries: Record<string, unknown>) =>
  Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown(entries))

let counter = 0
const uniqueId = (prefix: string) => `${prefix}-${++counter}-${Math.random().toString(36).slice(2, 8)}`

/** A limit of one start per second: a second take of the same quota starts a second later. */
const oneASecond = { limit: 1, window: "1 second" } as const

/** Two takes through `first` and `second`, each in its own fiber; their start instants. */
const twoStarts = (first: Effect.Effect<number, RateLimiter.RateLimiterError>, second: typeof first) =>
  Effect.gen(function*() {
    const a = yield* Effect.forkChild(first)
    const b = yield* Effect.forkChild(second)
    yield* Effect.yieldNow
    yield* TestClock.adjust("2 seconds")
    const exits = [yield* Fiber.await(a), yield* Fiber.await(b)]
    return exits.map((exit) => Exit.isSuccess(exit) ? exit.value : -1)
  })

const startOf = (limiter: RateLimiter.RateLimiter) => Effect.andThen(limiter.take(), Clock.currentTimeMillis)

describe("RateLimiter layers (Effect 4)", () => {
  it.effect("a key's layer builds the limiter on the store service, named by its id", () =>
    Effect.gen(function*() {
      const id = uniqueId("nominatim")
      class Nominatim extends RateLimiter.Tag(id)<Nominatim>() {}
      assert.strictEqual(Nominatim.id, id)
      assert.strictEqual(Nominatim.key, `@sluice/rate-limiter/${id}`)
      const limiter = yield* Effect.provide(
        Effect.service(Nominatim),
        Nominatim.layer(oneASecond).pipe(Layer.provide(RateLimiterStore.layerMemory))
      )
      assert.strictEqual(limiter.name, id)
      assert.isTrue(RateLimiter.isRateLimiter(limiter))
      assert.deepStrictEqual(limiter.dimensions, ["default"])
    }))

  it.effect("layerConfig reads the same keys as the options, and refuses a bad one naming it", () =>
    Effect.gen(function*() {
      const id = uniqueId("geo")
      class Geo extends RateLimiter.Tag(id)<Geo>() {}
      const live = Geo.layerConfig(Config.nested(RateLimiter.config, "GEO")).pipe(
        Layer.provide(RateLimiterStore.layerMemory)
      )
      const limiter = yield* Effect.provide(Effect.service(Geo), live).pipe(
        withConfig({ GEO: { LIMIT: "10", WINDOW: "1 second", BURST: "3" } })
      )
      assert.deepStrictEqual(limiter.limits.map((l) => [l.limit, l.burst, l.algorithm]), [[10, 3, "gcra"]])
      const error = yield* Effect.flip(
        Effect.provide(Effect.service(Geo), live).pipe(withConfig({ GEO: { LIMIT: "0", WINDOW: "1 second" } }))
      )
      assert.instanceOf(error, Config.ConfigError)
      assert.include(String(error), `LIMIT must be an integer ≥ 1, got "0"`)
      const gcraOnly = yield* Effect.flip(
        Effect.provide(Effect.service(Geo), live).pipe(
          withConfig({ GEO: { LIMIT: "3", WINDOW: "1 minute", ALGORITHM: "fixed-window", BURST: "2" } })
        )
      )
      assert.include(String(gcraOnly), "applies to gcra only")
    }))

  describe("layer memoization of layerMemory", () => {
    it.effect("an inner provide inside an enclosing provide of it is the same store: one quota", () =>
      Effect.gen(function*() {
        const name = uniqueId("shared")
        const make = RateLimiter.make({ name, ...oneASecond })
        const starts = yield* Effect.gen(function*() {
          // two limiters of one name, each made under its own provide of the same layer value
          const one = yield* Effect.provide(make, RateLimiterStore.layerMemory)
          const two = yield* Effect.provide(make, RateLimiterStore.layerMemory)
          return yield* twoStarts(startOf(one), startOf(two))
        }).pipe(Effect.provide(RateLimiterStore.layerMemory))
        // Effect 3 built a store per provide and started both at 0
        assert.deepStrictEqual(starts, [0, 1000])
      }))

    it.effect("sibling provides without a common one build two stores: two quotas", () =>
      Effect.gen(function*() {
        const name = uniqueId("siblings")
        const make = RateLimiter.make({ name, ...oneASecond })
        const one = yield* Effect.provide(make, RateLimiterStore.layerMemory)
        const two = yield* Effect.provide(make, RateLimiterStore.layerMemory)
        assert.deepStrictEqual(yield* twoStarts(startOf(one), startOf(two)), [0, 0])
      }))

    it.effect("Layer.fresh builds a store of its own inside the enclosing provide", () =>
      Effect.gen(function*() {
        const name = uniqueId("fresh")
        const make = RateLimiter.make({ name, ...oneASecond })
        const starts = yield* Effect.gen(function*() {
          const one = yield* Effect.provide(make, RateLimiterStore.layerMemory)
          const two = yield* Effect.provide(make, Layer.fresh(RateLimiterStore.layerMemory))
          return yield* twoStarts(startOf(one), startOf(two))
        }).pipe(Effect.provide(RateLimiterStore.layerMemory))
        assert.deepStrictEqual(starts, [0, 0])
      }))

    it.effect("two keys of one name on one store share its quota, as processes on one store do", () =>
      Effect.gen(function*() {
        const id = uniqueId("twice")
        class A extends RateLimiter.Tag(id)<A>() {}
        class B extends RateLimiter.Tag(`${id}-b`)<B>() {}
        const both = Layer.mergeAll(
          A.layer(oneASecond),
          RateLimiter.layer(B, { name: id, ...oneASecond })
        ).pipe(Layer.provide(RateLimiterStore.layerMemory))
        const starts = yield* Effect.gen(function*() {
          const a = yield* A
          const b = yield* B
          return yield* twoStarts(startOf(a), startOf(b))
        }).pipe(Effect.provide(both))
        assert.deepStrictEqual(starts, [0, 1000])
      }))
  })
})
