import { describe, expect, it } from "@effect/vitest"
import type { Bulkhead } from "@sluice/bulkhead"
import { CircuitBreaker, Provider } from "@sluice/provider"
import type { RateLimiterStore } from "@sluice/rate-limiter"
import { Effect, Layer } from "effect"
import type { Config, Scope } from "effect"
import type { CircuitBreaker as EffectCircuitBreaker } from "effect/persistence"
import { expectTypeOf } from "vitest"

class Boom {
  readonly _tag = "Boom"
}
const work: Effect.Effect<number, Boom> = Effect.succeed(1)

/** The provider a `make` with these options would give. */
type ProviderOf<T> = T extends Effect.Effect<infer P, infer _E, infer _R> ? P : never
type ErrorOf<T> = T extends Effect.Effect<infer _A, infer E, infer _R> ? E : never
type ContextOf<T> = T extends Effect.Effect<infer _A, infer _E, infer R> ? R : never

describe("the error channel follows the options", () => {
  it("a bare provider adds only ProviderClosed to the call's errors", () => {
    const _make = Provider.make({ name: "bare", bulkhead: { permits: 2 } })
    type P = ProviderOf<typeof _make>
    const _call = (p: P) => p.call(work)
    expectTypeOf<ErrorOf<ReturnType<typeof _call>>>().toEqualTypeOf<Boom | Provider.ProviderClosed>()
    expectTypeOf<ContextOf<typeof _make>>().toEqualTypeOf<Scope.Scope>()
    expect(Provider.isProvider(_make)).toBe(false)
  })

  it("a breaker from Effect 4's CircuitBreaker adds its CircuitBreakerError, not CircuitOpen", () => {
    const _adapted = (breaker: EffectCircuitBreaker.CircuitBreaker) =>
      Provider.make({
        name: "adapted",
        bulkhead: { permits: 2 },
        circuitBreaker: CircuitBreaker.fromEffect(breaker, { key: "adapted" })
      })
    type P = ProviderOf<ReturnType<typeof _adapted>>
    const _call = (p: P) => p.call(work)
    expectTypeOf<ErrorOf<ReturnType<typeof _call>>>().toEqualTypeOf<
      Boom | Provider.ProviderClosed | EffectCircuitBreaker.CircuitBreakerError
    >()
    const _guarded = (breaker: EffectCircuitBreaker.CircuitBreaker) =>
      work.pipe(CircuitBreaker.withCircuitBreaker(CircuitBreaker.fromEffect(breaker, { key: "alone" })))
    expectTypeOf<ErrorOf<ReturnType<typeof _guarded>>>().toEqualTypeOf<
      Boom | EffectCircuitBreaker.CircuitBreakerError
    >()
    const _own = work.pipe(CircuitBreaker.withCircuitBreaker(CircuitBreaker.makeUnsafe({ name: "own" })))
    expectTypeOf<ErrorOf<typeof _own>>().toEqualTypeOf<Boom | Provider.CircuitOpen>()
    expect(CircuitBreaker.isFromEffect(CircuitBreaker.makeUnsafe({ name: "own" }))).toBe(false)
  })

  it("each configured budget adds exactly its error", () => {
    const _make = Provider.make({
      name: "full",
      bulkhead: { permits: 2, maxWait: "1 second", maxWaiting: 10 },
      rateLimiter: { limit: 1, window: "1 second" },
      attemptTimeout: "2 seconds",
      totalTimeout: "10 seconds",
      retry: { maxAttempts: 3 },
      circuitBreaker: { consecutiveFailures: 5 }
    })
    type P = ProviderOf<typeof _make>
    const _call = (p: P) => p.call(work)
    expectTypeOf<ErrorOf<ReturnType<typeof _call>>>().toEqualTypeOf<Boom | Provider.ProviderError>()
    // settings for the limiter need the store
    expectTypeOf<ContextOf<typeof _make>>().toEqualTypeOf<Scope.Scope | RateLimiterStore.RateLimiterStore>()
  })

  it("no attemptTimeout → no CallTimeout; no limiter → no RateLimitExceeded; no retry → no RetryBudgetExhausted", () => {
    const _make = Provider.make({
      name: "some",
      bulkhead: { permits: 2, maxWait: "1 second" },
      totalTimeout: "5 seconds"
    })
    const _call = (p: ProviderOf<typeof _make>) => p.call(Effect.void)
    type E = ErrorOf<ReturnType<typeof _call>>
    expectTypeOf<E>().toEqualTypeOf<Provider.PermitWaitTimeout | Provider.TotalTimeout | Provider.ProviderClosed>()
    expectTypeOf<Extract<E, { _tag: "CallTimeout" }>>().toEqualTypeOf<never>()
    expectTypeOf<Extract<E, { _tag: "RateLimitExceeded" }>>().toEqualTypeOf<never>()
    expectTypeOf<Extract<E, { _tag: "RetryBudgetExhausted" }>>().toEqualTypeOf<never>()
  })

  it("a retry policy without a budget adds nothing; a given bulkhead adds both of its errors", () => {
    const bulkhead = {} as Bulkhead.Bulkhead
    const _make = Provider.make({ name: "given", bulkhead, retry: { maxAttempts: 3, budget: false } })
    const _call = (p: ProviderOf<typeof _make>) => p.call(Effect.void)
    expectTypeOf<ErrorOf<ReturnType<typeof _call>>>().toEqualTypeOf<Bulkhead.BulkheadError | Provider.ProviderClosed>()
  })

  it("per-call budgets add their own errors", () => {
    const _make = Provider.make({ name: "per-call", bulkhead: { permits: 2 } })
    const _call = (p: ProviderOf<typeof _make>) => p.call(work, { attemptTimeout: "1 second", cost: 2 })
    expectTypeOf<ErrorOf<ReturnType<typeof _call>>>().toEqualTypeOf<
      Boom | Provider.CallTimeout | Provider.ProviderClosed
    >()
  })

  it("catchTag removes each error from the union", () => {
    const _make = Provider.make({
      name: "catch",
      bulkhead: { permits: 2, maxWait: "1 second" },
      attemptTimeout: "2 seconds"
    })
    const _handled = (p: ProviderOf<typeof _make>) =>
      p.call(work).pipe(
        Effect.catchTag("PermitWaitTimeout", () => Effect.succeed(0)),
        Effect.catchTag("CallTimeout", () => Effect.succeed(0))
      )
    expectTypeOf<ErrorOf<ReturnType<typeof _handled>>>().toEqualTypeOf<Boom | Provider.ProviderClosed>()
  })

  it("layerConfig and declared tags carry the full union", () => {
    class Nominatim extends Provider.Tag("types-nominatim")<Nominatim>() {}
    const _program = Effect.flatMap(Nominatim, (p) => p.call(work))
    expectTypeOf<ErrorOf<typeof _program>>().toEqualTypeOf<Boom | Provider.ProviderError>()
    const live = Nominatim.layer({ bulkhead: { permits: 2 } })
    expectTypeOf(live).toEqualTypeOf<Layer.Layer<Nominatim>>()
    const withLimiter = Nominatim.layer({ bulkhead: { permits: 2 }, rateLimiter: { limit: 1, window: "1 second" } })
    expectTypeOf(withLimiter).toEqualTypeOf<Layer.Layer<Nominatim, never, RateLimiterStore.RateLimiterStore>>()
    const fromConfig = Nominatim.layerConfig(Provider.config)
    expectTypeOf(fromConfig).toEqualTypeOf<
      Layer.Layer<Nominatim, Config.ConfigError, RateLimiterStore.RateLimiterStore>
    >()
    expect(Nominatim.key).toBe("@sluice/provider/types-nominatim")
    expect(Layer.isLayer(live)).toBe(true)
  })
})
