import { assert, describe, it } from "@effect/vitest"
import { Bulkhead } from "@sluice/bulkhead"
import { CircuitBreaker, Provider } from "@sluice/provider"
import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import { Cause, Effect, Exit } from "effect"

/** The defect an effect dies with, as `String` prints it. */
const defectOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.exit(effect), (exit) => Exit.isFailure(exit) ? String(Cause.squash(exit.cause)) : "succeeded")

// options built away from the call, as a program reading them from elsewhere would: no excess
// property check at compile time, so the decoder is the one to refuse the misspelling
const loose = (options: object): never => options as never

describe("a misspelled option is refused, not ignored", () => {
  it.scoped("a bulkhead's, with the key it likely meant", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* defectOf(Bulkhead.make(loose({ name: "b", permits: 2, maxWiat: "1 second" }))),
        "IllegalArgumentException: bulkhead \"b\": unknown option maxWiat (did you mean maxWait?)"
      )
      assert.strictEqual(
        yield* defectOf(Bulkhead.make(loose({ name: "b", permits: 2, colour: "red" }))),
        "IllegalArgumentException: bulkhead \"b\": unknown option colour"
      )
    }))

  it.scoped("a rate limiter's", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* defectOf(RateLimiter.make(loose({ name: "r", limit: 1, window: "1 second", maxWiat: 0 }))),
        "IllegalArgumentException: rate limiter \"r\": unknown option maxWiat (did you mean maxWait?)"
      )
      assert.strictEqual(
        yield* defectOf(RateLimiter.make(loose({ name: "r", limits: [{ limit: 1, window: "1 second", brust: 2 }] }))),
        "IllegalArgumentException: rate limiter \"r\": unknown option limits[0].brust (did you mean limits[0].burst?)"
      )
    }).pipe(Effect.provide(RateLimiterStore.layerMemory)))

  it.scoped("a provider's, top-level and nested, a given key guessed too", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* defectOf(Provider.make(loose({ name: "p", bulkhead: { permits: 2 }, attemptTimout: "1 second" }))),
        "IllegalArgumentException: provider \"p\": unknown option attemptTimout (did you mean attemptTimeout?)"
      )
      assert.strictEqual(
        yield* defectOf(
          Provider.make(loose({ name: "p", bulkhead: { permits: 2 }, circuitBreaker: { consecutiveFailure: 1 } }))
        ),
        "IllegalArgumentException: provider \"p\": unknown option circuitBreaker.consecutiveFailure" +
          " (did you mean circuitBreaker.consecutiveFailures?)"
      )
      assert.strictEqual(
        yield* defectOf(
          Provider.make(loose({ name: "p", bulkhead: { permits: 2 }, rateLimitr: { limit: 1, window: "1 second" } }))
        ),
        "IllegalArgumentException: provider \"p\": unknown option rateLimitr (did you mean rateLimiter?)"
      )
      assert.strictEqual(
        yield* defectOf(Provider.make(loose({ name: "p", bulkhead: { permits: 2, maxWiat: 0 } }))),
        "IllegalArgumentException: bulkhead \"p\": unknown option maxWiat (did you mean maxWait?)"
      )
    }).pipe(Effect.provide(RateLimiterStore.layerMemory)))

  it.scoped("a circuit breaker's on its own", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* defectOf(CircuitBreaker.make(loose({ name: "c", openFr: "1 second" }))),
        "IllegalArgumentException: circuit breaker \"c\": unknown option openFr (did you mean openFor?)"
      )
    }))

  it.scoped("the keys a caller hands on are accepted", () =>
    Effect.gen(function*() {
      const provider = yield* Provider.make({
        name: "ok",
        bulkhead: { permits: 1 },
        rateLimiter: { limit: 5, window: "1 second" },
        retry: { maxAttempts: 2, isRetryable: () => false },
        circuitBreaker: { consecutiveFailures: 3, isFailure: () => true },
        isUpstreamError: () => false
      })
      assert.strictEqual(yield* provider.call(Effect.succeed(1), { lane: undefined, retry: false }), 1)
    }).pipe(Effect.provide(RateLimiterStore.layerMemory)))
})
