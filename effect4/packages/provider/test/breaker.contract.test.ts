/**
 * The breaker contract on both breakers a provider takes. The differences it pins: while the probe
 * runs, sluice refuses with `CircuitOpen { state: "half-open" }`, Effect 4 with `CircuitHalfOpen`;
 * a success that leaves the window over the ratio opens Effect's circuit, never sluice's.
 */
import { assert, describe, it } from "@effect/vitest"
import { CircuitBreaker } from "@sluice/provider"
import { Effect, Predicate } from "effect"
import { CircuitBreaker as EffectCircuitBreaker } from "effect/persistence"
import { breakerContract } from "./breaker.contract.js"
import { uniqueName } from "./utils.js"

describe("sluice's circuit breaker", () => {
  breakerContract({
    label: "sluice",
    consecutive: (failures) => Effect.succeed({ consecutiveFailures: failures, openFor: "1 second" }),
    ratio: (ratio, window, minimumCalls) =>
      Effect.succeed({ failureRatio: { ratio, window, minimumCalls }, openFor: "1 second" }),
    refusal: (error) =>
      Predicate.isTagged(error, "CircuitOpen") && Predicate.hasProperty(error, "state")
        ? String(error.state)
        : String(error),
    probing: "half-open",
    afterSuccessOverRatio: "closed"
  })
})

/** Effect's breaker on a memory store of its own, under a key of its own. */
const effectBreaker = (tripPolicy: EffectCircuitBreaker.TripPolicy) =>
  EffectCircuitBreaker.make({ tripPolicy, openDuration: "1 second" }).pipe(
    Effect.map((breaker) => CircuitBreaker.fromEffect(breaker, { key: uniqueName("effect") })),
    Effect.provide(EffectCircuitBreaker.layerStoreMemory())
  )

describe("Effect 4's circuit breaker through CircuitBreaker.fromEffect", () => {
  breakerContract({
    label: "effect",
    consecutive: (failures) => effectBreaker(EffectCircuitBreaker.consecutive(failures)),
    ratio: (threshold, size, minimumCalls) =>
      effectBreaker(EffectCircuitBreaker.rate({ threshold, size, minimumCalls })),
    refusal: (error) => {
      if (!(error instanceof EffectCircuitBreaker.CircuitBreakerError)) return String(error)
      return error.reason._tag === "CircuitOpen"
        ? "open"
        : error.reason._tag === "CircuitHalfOpen"
        ? "CircuitHalfOpen"
        : error.reason._tag
    },
    probing: "CircuitHalfOpen",
    afterSuccessOverRatio: "open"
  })

  it.effect("its stats follow the state, and its counts read 0 (Effect's breaker exposes none)", () =>
    Effect.gen(function*() {
      const breaker = yield* effectBreaker(EffectCircuitBreaker.consecutive(2))
      const failing = Effect.fail("down").pipe(CircuitBreaker.withCircuitBreaker(breaker), Effect.ignore)
      yield* failing
      assert.deepInclude(yield* breaker.stats, { state: "closed", consecutiveFailures: 0, windowCalls: 0 })
      yield* failing
      assert.deepInclude(yield* breaker.stats, { state: "open", consecutiveFailures: 0, windowFailures: 0 })
    }))
})
