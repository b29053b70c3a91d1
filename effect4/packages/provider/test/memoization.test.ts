/**
 * Effect 4 memoizes layers across nested provides (RFC 0003 §3): each provider layer builds its
 * state in its own `Layer.effect`, so that what is shared is exactly what the program composes.
 * Each case shows the bound (a bulkhead of one permit that never waits) as well as the identity.
 */
import { assert, describe, it } from "@effect/vitest"
import { Provider } from "@sluice/provider"
import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import { Deferred, Effect, Fiber, Layer } from "effect"
import { uniqueName, yieldTurns } from "./utils.js"

/** One permit, no waiting: a second call while one holds it is refused at once when they share the bound. */
const settings = { bulkhead: { permits: 1, maxWait: 0 }, gracePeriod: 0 } as const

/** Holds `provider`'s permit until `release` is done; returns once the call holds it. */
const hold = (provider: Provider.Provider, release: Deferred.Deferred<void>) =>
  Effect.gen(function*() {
    const started = yield* Deferred.make<void>()
    const fiber = yield* Effect.forkChild(
      provider.call(Effect.andThen(Deferred.succeed(started, undefined), Deferred.await(release)))
    )
    yield* Deferred.await(started)
    return fiber
  })

/** How a second call fares while the first holds the permit: `"passed"` or the refusal's tag. */
const second = (provider: Provider.Provider) =>
  provider.call(Effect.succeed("passed")).pipe(Effect.catch((error) => Effect.succeed(error._tag)))

describe("layer memoization: per-provider instances stay separate", () => {
  it.effect("two tags with the same options in one program are two providers, two bounds", () =>
    Effect.gen(function*() {
      const idA = uniqueName("geo-a")
      const idB = uniqueName("geo-b")
      class A extends Provider.Tag(idA)<A>() {}
      class B extends Provider.Tag(idB)<B>() {}
      const program = Effect.gen(function*() {
        const a = yield* A
        const b = yield* B
        assert.notStrictEqual(a, b)
        assert.notStrictEqual(a.bulkhead, b.bulkhead)
        const release = yield* Deferred.make<void>()
        const held = yield* hold(a, release)
        assert.strictEqual(yield* second(b), "passed")
        assert.strictEqual(yield* second(a), "PermitWaitTimeout")
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(held)
      })
      yield* program.pipe(Effect.provide(Layer.mergeAll(A.layer(settings), B.layer(settings))))
    }))

  it.effect("one layer value at the root and again inside a batch is one provider, one bound", () =>
    Effect.gen(function*() {
      class Geo extends Provider.Tag(uniqueName("geo"))<Geo>() {}
      const live = Geo.layer(settings)
      const program = Effect.gen(function*() {
        const outer = yield* Geo
        const release = yield* Deferred.make<void>()
        const held = yield* hold(outer, release)
        // the batch provides the same value again: Effect 4 reuses the enclosing build
        const inner = yield* Effect.gen(function*() {
          const inner = yield* Geo
          return { inner, refused: yield* second(inner) }
        }).pipe(Effect.provide(live))
        assert.strictEqual(inner.inner, outer)
        assert.strictEqual(inner.refused, "PermitWaitTimeout")
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(held)
      })
      yield* program.pipe(Effect.provide(live))
    }))

  it.effect("siblings without a common provide build one provider each", () =>
    Effect.gen(function*() {
      class Geo extends Provider.Tag(uniqueName("geo"))<Geo>() {}
      const live = Geo.layer(settings)
      const release = yield* Deferred.make<void>()
      const seen: Array<Provider.Provider> = []
      // each sibling holds its provider's only permit at the same time: two bounds, or one would be refused
      const sibling = Effect.gen(function*() {
        const geo = yield* Geo
        seen.push(geo)
        return yield* geo.call(Deferred.await(release))
      }).pipe(Effect.provide(live))
      const both = yield* Effect.forkChild(Effect.all([sibling, sibling], { concurrency: 2 }))
      yield* yieldTurns()
      assert.strictEqual(seen.length, 2)
      assert.notStrictEqual(seen[0], seen[1])
      assert.strictEqual((yield* seen[0].bulkhead.stats).inFlight, 1)
      assert.strictEqual((yield* seen[1].bulkhead.stats).inFlight, 1)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(both)
    }))

  it.effect("layerMemory at the root and inside the provider's layer is one store", () =>
    Effect.gen(function*() {
      const id = uniqueName("geo")
      class Geo extends Provider.Tag(id)<Geo>() {}
      const live = Geo.layer({
        bulkhead: { permits: 1 },
        rateLimiter: { limit: 1, window: "1 minute", maxWait: 0 }
      }).pipe(Layer.provide(RateLimiterStore.layerMemory))
      const program = Effect.gen(function*() {
        // a limiter of the same name on the root's store takes the minute's only start
        const root = yield* RateLimiter.make({ name: id, limit: 1, window: "1 minute", maxWait: 0 })
        yield* root.take()
        const geo = yield* Geo
        const error = yield* Effect.flip(geo.call(Effect.succeed("passed")))
        assert.strictEqual(error._tag, "RateLimitExceeded")
      })
      yield* program.pipe(Effect.provide(live), Effect.provide(RateLimiterStore.layerMemory))
    }))

  it.effect("{ local: true } builds a provider of its own inside an enclosing provide", () =>
    Effect.gen(function*() {
      class Geo extends Provider.Tag(uniqueName("geo"))<Geo>() {}
      const live = Geo.layer(settings)
      const program = Effect.gen(function*() {
        const outer = yield* Geo
        const release = yield* Deferred.make<void>()
        const held = yield* hold(outer, release)
        const inner = yield* Effect.gen(function*() {
          const inner = yield* Geo
          return { inner, outcome: yield* second(inner) }
        }).pipe(Effect.provide(live, { local: true }))
        assert.notStrictEqual(inner.inner, outer)
        assert.strictEqual(inner.outcome, "passed")
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(held)
      })
      yield* program.pipe(Effect.provide(live))
    }))
})
