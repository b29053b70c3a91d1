/**
 * A circuit breaker on its own, around any effect: after enough failures it opens and fails calls
 * at once with `CircuitOpen`, then lets one probe through; the probe's success closes it. A
 * provider builds one from its `circuitBreaker` option, or takes one given here.
 *
 * @since 2.0.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { dual } from "effect/Function"
import * as Metric from "effect/Metric"
import type * as EffectCircuitBreaker from "effect/persistence/CircuitBreaker"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import * as internal from "./internal/circuitBreaker.js"
import { circuitGauge, circuitValue } from "./internal/metrics.js"
import { resolveBreaker } from "./internal/options.js"
import type * as ProviderError from "./ProviderError.js"
import type { CircuitBreakerOptions } from "./ProviderOptions.js"

/**
 * @since 2.0.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("@sluice/provider/CircuitBreaker")

/**
 * @since 2.0.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * `closed`: calls pass; `open`: calls fail at once; `half-open`: one probe passes.
 *
 * @since 2.0.0
 * @category models
 */
export type State = "closed" | "open" | "half-open"

/**
 * A breaker's options: those of a provider's `circuitBreaker`, and its name (in `CircuitOpen`
 * and in the `sluice_provider_circuit_state` gauge).
 *
 * @since 2.0.0
 * @category models
 */
export interface Options extends CircuitBreakerOptions {
  readonly name: string
}

/**
 * @since 2.0.0
 * @category models
 */
export interface Stats {
  readonly name: string
  readonly state: State
  /** Failures in a row, while closed (0 for a breaker made by `fromEffect`, which cannot say). */
  readonly consecutiveFailures: number
  /** With `failureRatio`: the calls in the window, and the failures among them. */
  readonly windowCalls: number
  readonly windowFailures: number
}

/**
 * @since 2.0.0
 * @category models
 */
export interface CircuitBreaker {
  readonly [TypeId]: TypeId
  readonly name: string
  /** Which failures count (the `isFailure` option). */
  readonly isFailure: (error: unknown) => boolean
  /** A snapshot. */
  readonly stats: Effect.Effect<Stats>
}

class Breaker implements CircuitBreaker {
  readonly [TypeId]: TypeId = TypeId
  readonly policy: internal.Policy
  constructor(
    readonly name: string,
    readonly isFailure: (error: unknown) => boolean,
    readonly machine: internal.CircuitBreaker
  ) {
    this.policy = internal.machinePolicy(machine)
  }
  get stats(): Effect.Effect<Stats> {
    return Effect.sync(() => {
      const counts = this.machine.counts
      return {
        name: this.name,
        state: this.machine.state,
        consecutiveFailures: counts.consecutive,
        windowCalls: counts.calls,
        windowFailures: counts.failures
      }
    })
  }
}

const all = (): boolean => true

/**
 * @since 2.0.0
 * @category guards
 */
export const isCircuitBreaker = (u: unknown): u is CircuitBreaker => Predicate.hasProperty(u, TypeId)

/**
 * A breaker, closed, without an effect: for a module-level constant. Its gauge goes to the metric
 * registry of the fiber that makes it (the default registry outside one). Invalid options throw
 * an `IllegalArgumentError` naming the breaker and the value.
 *
 * @since 2.0.0
 * @category constructors
 */
export const makeUnsafe = (options: Options): CircuitBreaker => {
  const settings = resolveBreaker(options)
  const maker = Fiber.getCurrent()
  // the registry alone, not the maker's whole context: a breaker outlives the scope that made it
  const registry = maker === undefined
    ? Context.empty()
    : Context.make(Metric.MetricRegistry, maker.getRef(Metric.MetricRegistry))
  const gauge = Metric.withAttributes(circuitGauge, { name: options.name })
  const machine = new internal.CircuitBreaker(
    settings,
    (state) => gauge.updateUnsafe(circuitValue[state], registry)
  )
  gauge.updateUnsafe(0, registry)
  return new Breaker(options.name, options.isFailure ?? all, machine)
}

/**
 * @since 2.0.0
 * @category constructors
 * @deprecated Use `makeUnsafe`, Effect 4's name for it.
 */
export const unsafeMake: (options: Options) => CircuitBreaker = makeUnsafe

/**
 * A breaker, closed. Invalid options are a defect (`IllegalArgumentError`) naming the breaker
 * and the value.
 *
 * @example
 * ```ts
 * import { CircuitBreaker } from "@sluice/provider"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   const breaker = yield* CircuitBreaker.make({ name: "geo", consecutiveFailures: 5, openFor: "30 seconds" })
 *   return yield* Effect.succeed("Lyon").pipe(CircuitBreaker.withCircuitBreaker(breaker))
 * })
 * ```
 *
 * @since 2.0.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<CircuitBreaker> => Effect.sync(() => makeUnsafe(options))

/** @internal */
export const policyOf = (breaker: CircuitBreaker): internal.Policy => (breaker as Breaker | Adapted).policy

/**
 * Effect 4's `CircuitBreaker` (from `effect/persistence`) under one key, adapted: what a
 * provider's `circuitBreaker` option takes, its refusals are Effect's `CircuitBreakerError`
 * (`CircuitOpen`, and `CircuitHalfOpen` while its probe runs), in place of sluice's `CircuitOpen`.
 *
 * @since 2.0.0
 * @category models
 */
export interface FromEffect extends CircuitBreaker {
  readonly [FromEffectTypeId]: FromEffectTypeId
  readonly breaker: EffectCircuitBreaker.CircuitBreaker
  readonly key: string
}

/**
 * @since 2.0.0
 * @category type ids
 */
export const FromEffectTypeId: unique symbol = Symbol.for("@sluice/provider/CircuitBreaker/FromEffect")

/**
 * @since 2.0.0
 * @category type ids
 */
export type FromEffectTypeId = typeof FromEffectTypeId

const toState = (state: EffectCircuitBreaker.State): State =>
  state._tag === "Closed" ? "closed" : state._tag === "Open" ? "open" : "half-open"

const outcomes: Record<internal.Judgement, EffectCircuitBreaker.Outcome> = {
  success: { _tag: "Success" },
  failure: { _tag: "Failure" },
  neutral: { _tag: "Ignored" }
}

class Adapted implements FromEffect {
  readonly [TypeId]: TypeId = TypeId
  readonly [FromEffectTypeId]: FromEffectTypeId = FromEffectTypeId
  readonly policy: internal.Policy
  readonly name: string
  constructor(
    readonly breaker: EffectCircuitBreaker.CircuitBreaker,
    readonly key: string,
    readonly isFailure: (error: unknown) => boolean
  ) {
    this.name = key
    // a store that cannot say reads as closed: the breaker itself then admits the call (its "allow")
    const state = Effect.map(
      Effect.orElseSucceed(breaker.state(key), (): EffectCircuitBreaker.State => ({ _tag: "Closed", key })),
      toState
    )
    this.policy = {
      guard: (self, _owner, judge) => breaker.execute(self, { key, classify: (exit) => outcomes[judge(exit)] }),
      state
    }
  }
  get stats(): Effect.Effect<Stats> {
    // Effect's breaker keeps its counts in its store and does not expose them
    return Effect.map(this.policy.state, (state) => ({
      name: this.name,
      state,
      consecutiveFailures: 0,
      windowCalls: 0,
      windowFailures: 0
    }))
  }
}

/**
 * Adapts Effect 4's `CircuitBreaker` (`effect/persistence`, experimental) under `key`, for a
 * provider's `circuitBreaker` option or `withCircuitBreaker`. The provider's rule of what counts
 * holds (only the call's own failures and `CallTimeout`; `isFailure` picks among the call's
 * failures). Effect's breaker emits no metrics: `circuitState` stays silent for it. Its `stats`
 * carry the state only: the counts read 0, because Effect's breaker keeps them in its store and
 * exposes none (watch `breaker.transitions` for its openings).
 *
 * @example
 * ```ts
 * import { CircuitBreaker, Provider } from "@sluice/provider"
 * import { Effect } from "effect"
 * import { CircuitBreaker as EffectCircuitBreaker } from "effect/persistence"
 *
 * const program = Effect.gen(function*() {
 *   const breaker = yield* EffectCircuitBreaker.make({
 *     tripPolicy: EffectCircuitBreaker.consecutive(5),
 *     openDuration: "30 seconds"
 *   })
 *   const geo = yield* Provider.make({
 *     name: "geo",
 *     bulkhead: { permits: 4 },
 *     circuitBreaker: CircuitBreaker.fromEffect(breaker, { key: "geo" })
 *   })
 *   return yield* geo.call(Effect.succeed("Lyon"))
 * }).pipe(Effect.scoped, Effect.provide(EffectCircuitBreaker.layerStoreMemory()))
 * ```
 *
 * @since 2.0.0
 * @category constructors
 */
export const fromEffect = (
  breaker: EffectCircuitBreaker.CircuitBreaker,
  options: { readonly key: string; readonly isFailure?: ((error: unknown) => boolean) | undefined }
): FromEffect => new Adapted(breaker, options.key, options.isFailure ?? all)

/**
 * @since 2.0.0
 * @category guards
 */
export const isFromEffect = (u: unknown): u is FromEffect => Predicate.hasProperty(u, FromEffectTypeId)

/**
 * Runs `self` through the breaker: refused at once with `CircuitOpen` while the circuit is open
 * (or half-open with its probe in flight). A success, or a failure `isFailure` rejects, counts as
 * a success; a failure it accepts, or a defect, as a failure; an interruption proves nothing.
 *
 * @since 2.0.0
 * @category combinators
 */
export const withCircuitBreaker: {
  <B extends CircuitBreaker>(
    breaker: B
  ): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | RefusalOf<B>, R>
  <A, E, R, B extends CircuitBreaker>(self: Effect.Effect<A, E, R>, breaker: B): Effect.Effect<A, E | RefusalOf<B>, R>
} = dual(
  2,
  <A, E, R>(self: Effect.Effect<A, E, R>, breaker: CircuitBreaker): Effect.Effect<A, unknown, R> =>
    policyOf(breaker).guard(self, { name: breaker.name, provider: undefined }, (exit) => {
      if (Exit.isSuccess(exit)) return "success"
      if (Cause.hasInterruptsOnly(exit.cause)) return "neutral"
      const failure = Cause.findError(exit.cause)
      if (Result.isFailure(failure)) return "failure"
      return breaker.isFailure(failure.success) ? "failure" : "success"
    })
)

/**
 * What a breaker refuses with: sluice's `CircuitOpen`, or Effect's `CircuitBreakerError` for one
 * made by `fromEffect`.
 *
 * @since 2.0.0
 * @category type-level
 */
export type RefusalOf<B> = B extends FromEffect ? EffectCircuitBreaker.CircuitBreakerError : CircuitOpen

/**
 * The breaker's refusal (from `ProviderError`): `breaker` names it; `provider` is `undefined`
 * unless a provider's call was refused.
 *
 * @since 2.0.0
 * @category errors
 */
export type CircuitOpen = ProviderError.CircuitOpen

/**
 * `sluice_provider_circuit_state`: 0 closed, 1 half-open, 2 open; labelled `name` (a provider's
 * breaker carries the provider's name). The same metric as `Provider.circuitState`.
 *
 * @since 2.0.0
 * @category metrics
 */
export const circuitState: Metric.Gauge<number> = circuitGauge
