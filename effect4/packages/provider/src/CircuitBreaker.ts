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
  /** Failures in a row, while closed. */
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
  constructor(
    readonly name: string,
    readonly isFailure: (error: unknown) => boolean,
    readonly machine: internal.CircuitBreaker
  ) {}
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
export const machineOf = (breaker: CircuitBreaker): internal.CircuitBreaker => (breaker as Breaker).machine

/**
 * Runs `self` through the breaker: refused at once with `CircuitOpen` while the circuit is open
 * (or half-open with its probe in flight). A success, or a failure `isFailure` rejects, counts as
 * a success; a failure it accepts, or a defect, as a failure; an interruption proves nothing.
 *
 * @since 2.0.0
 * @category combinators
 */
export const withCircuitBreaker: {
  (breaker: CircuitBreaker): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | CircuitOpen, R>
  <A, E, R>(self: Effect.Effect<A, E, R>, breaker: CircuitBreaker): Effect.Effect<A, E | CircuitOpen, R>
} = dual(
  2,
  <A, E, R>(self: Effect.Effect<A, E, R>, breaker: CircuitBreaker): Effect.Effect<A, E | CircuitOpen, R> =>
    internal.guard(machineOf(breaker), { name: breaker.name, provider: undefined }, self, (exit) => {
      if (Exit.isSuccess(exit)) return "success"
      if (Cause.hasInterruptsOnly(exit.cause)) return "neutral"
      const failure = Cause.findError(exit.cause)
      if (Result.isFailure(failure)) return "failure"
      return breaker.isFailure(failure.success) ? "failure" : "success"
    })
)

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
