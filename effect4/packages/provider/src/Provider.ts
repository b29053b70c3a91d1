/**
 * A provider is everything sluice puts around the calls to one upstream: a bulkhead (how many
 * calls are in flight), a rate limiter (how many start per window), four budgets (permit wait,
 * limiter wait, one attempt, the total), retries with a retry budget, a circuit breaker, a
 * graceful shutdown, and the metrics that tell which bound binds.
 *
 * One attempt, outermost first: bulkhead → rate limiter → attempt timeout → the call → release.
 * Retries sit outside: each attempt takes a fresh permit and token, and backoff sleeps hold
 * neither. Every refusal is its own typed error, next to the call's own errors.
 *
 * @since 2.0.0
 */
import type { Bulkhead } from "@sluice/bulkhead"
import type { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import type * as Config from "effect/Config"
import type * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Metric from "effect/Metric"
import type * as EffectCircuitBreaker from "effect/persistence/CircuitBreaker"
import type * as Scope from "effect/Scope"
import type * as CircuitBreaker from "./CircuitBreaker.js"
import * as internalConfig from "./internal/config.js"
import * as lane from "./internal/lane.js"
import * as metrics from "./internal/metrics.js"
import * as options from "./internal/options.js"
import * as internal from "./internal/provider.js"
import * as Errors from "./ProviderError.js"
import type { CallOptions, Options, Settings } from "./ProviderOptions.js"
import type * as ProviderRecording from "./ProviderRecording.js"
import * as ProviderStats from "./ProviderStats.js"

/**
 * @since 2.0.0
 * @category type ids
 */
export const TypeId: unique symbol = internal.TypeId

/**
 * @since 2.0.0
 * @category type ids
 */
export type TypeId = typeof TypeId

// models

/**
 * One provider. `Err` is the union of the refusals this provider can produce; with literal
 * options (`make`, `layer`) it holds only the budgets that are configured, elsewhere it is the
 * full `ProviderError`.
 *
 * @since 2.0.0
 * @category models
 */
export interface Provider<out Err = ProviderError> {
  readonly [TypeId]: TypeId
  /** The name used in errors, metrics (`name` label) and spans. */
  readonly name: string
  /** The provider's bulkhead (its name is the provider's), with its store error: `Err` beyond `ProviderError`. */
  readonly bulkhead: Bulkhead.Bulkhead<Exclude<Err, ProviderError>>
  /** The provider's rate limiter, if it has one. */
  readonly rateLimiter: RateLimiter.RateLimiter | undefined
  /**
   * Runs `self` through the provider: circuit breaker, then per attempt bulkhead → rate limiter →
   * attempt timeout → `self` → release, retried as the policy says, all within the total budget.
   * Per-call budgets override the provider's (and add their errors to the type).
   */
  readonly call: <A, E, R, const C extends CallOptions = {}>(
    self: Effect.Effect<A, E, R>,
    options?: (C & CallOptions) | undefined
  ) => Effect.Effect<A, E | Err | CallErrorsOf<C>, R>
  /** Counters, phase times over the last calls, and the verdict: a snapshot. */
  readonly stats: Effect.Effect<ProviderStats.Stats>
  /**
   * The run so far as time series (see `ProviderRecording`), `undefined` unless the provider
   * was made with `recording`.
   *
   * @since 2.0.0
   */
  readonly recording: Effect.Effect<ProviderRecording.Recording | undefined>
}

// options: declared in the module `ProviderOptions`, re-exported under the same names

/**
 * The options of a provider and of a call: see the module `ProviderOptions`.
 *
 * @since 2.0.0
 * @category models
 */
export type {
  Backoff,
  CallOptions,
  CircuitBreakerOptions,
  Cost,
  FailureRatio,
  Options,
  RetryBudget,
  RetryOptions,
  Settings,
  Settlement,
  Usage
} from "./ProviderOptions.js"

/**
 * What a provider reports about itself: see the module `ProviderStats`.
 *
 * @since 2.0.0
 * @category models
 */
export type { LaneSummary, Outcome, PhaseSummary, Stats, Verdict } from "./ProviderStats.js"

// errors: declared in the module `ProviderError`, re-exported so that one import gives them all

/**
 * Every refusal of a provider, its bulkhead's and its limiter's, as classes (`Effect.catchTag`,
 * `instanceof`): see the module `ProviderError`.
 *
 * @since 2.0.0
 * @category errors
 */
export {
  BulkheadFull,
  CallTimeout,
  CircuitOpen,
  CostExceedsCapacity,
  PermitWaitTimeout,
  ProviderClosed,
  RateLimiterStoreError,
  RateLimitExceeded,
  RetryBudgetExhausted,
  TotalTimeout
} from "./ProviderError.js"

/**
 * Every refusal a provider can produce: see `ProviderError.ProviderError`.
 *
 * @since 2.0.0
 * @category errors
 */
export type ProviderError = Errors.ProviderError

/**
 * @since 2.0.0
 * @category guards
 */
export const isProvider: (u: unknown) => u is Provider<unknown> = internal.isProvider

/**
 * True for every member of `ProviderError`, the bulkhead's and the limiter's errors included.
 *
 * @since 2.0.0
 * @category guards
 */
export const isProviderError: (u: unknown) => u is ProviderError = Errors.isProviderError

/**
 * An error that carries `[RetryableTypeId]: true` is retried by the default retry predicate.
 *
 * @since 2.0.0
 * @category retries
 */
export const RetryableTypeId: unique symbol = options.RetryableTypeId

/**
 * @since 2.0.0
 * @category retries
 */
export type RetryableTypeId = typeof RetryableTypeId

/**
 * The default retry predicate: `CallTimeout`, and errors marked with `RetryableTypeId`.
 *
 * @since 2.0.0
 * @category retries
 */
export const isRetryable: (error: unknown) => boolean = options.isRetryable

// type-level: which errors the options can produce

/**
 * Whether the options configure `K`: true when the key may hold a value other than `undefined`
 * (an optional key of a widened type counts as configured).
 */
type Configures<O, K extends PropertyKey> = K extends keyof O ? [O[K]] extends [undefined] ? false : true
  : false

type When<C extends boolean, T> = C extends true ? T : never

/**
 * The bulkhead errors of a bulkhead option: all of them and its store error for a given bulkhead
 * (none when its type is only `Bulkhead<unknown>`, as in widened `Options`), and for settings `BulkheadFull` only with `maxWaiting`, `PermitWaitTimeout` only with `maxWait`.
 */
type BulkheadErrorsOf<B> = B extends Bulkhead.Bulkhead<infer E> ?
  Bulkhead.BulkheadError | (unknown extends E ? never : E)
  : B extends undefined ? never
  : When<Configures<B, "maxWaiting">, Errors.BulkheadFull> | When<Configures<B, "maxWait">, Errors.PermitWaitTimeout>

/** The breaker's refusal: Effect's `CircuitBreakerError` for a breaker from `CircuitBreaker.fromEffect`. */
type CircuitErrorsOf<B> = B extends CircuitBreaker.FromEffect ? EffectCircuitBreaker.CircuitBreakerError
  : Errors.CircuitOpen

/** The retry budget's error, unless the budget is off. */
type RetryErrorsOf<R> = R extends undefined ? never : R extends { readonly budget: false } ? never
: Errors.RetryBudgetExhausted

/**
 * The refusals a provider built from options `O` can produce.
 *
 * @since 2.0.0
 * @category type-level
 */
export type ErrorsOf<O> =
  | Errors.ProviderClosed
  | ("bulkhead" extends keyof O ? BulkheadErrorsOf<O["bulkhead"]> : never)
  | When<
    Configures<O, "rateLimiter">,
    Errors.RateLimitExceeded | Errors.CostExceedsCapacity | Errors.RateLimiterStoreError
  >
  | When<Configures<O, "attemptTimeout">, Errors.CallTimeout>
  | When<Configures<O, "totalTimeout">, Errors.TotalTimeout>
  | When<
    Configures<O, "circuitBreaker">,
    "circuitBreaker" extends keyof O ? CircuitErrorsOf<O["circuitBreaker"]> : never
  >
  | ("retry" extends keyof O ? RetryErrorsOf<O["retry"]> : never)

/**
 * The errors the per-call budgets add.
 *
 * @since 2.0.0
 * @category type-level
 */
export type CallErrorsOf<C> =
  | When<Configures<C, "attemptTimeout">, Errors.CallTimeout>
  | When<Configures<C, "totalTimeout">, Errors.TotalTimeout>

/**
 * What building a provider from options `O` needs: the `RateLimiterStore` when it builds its
 * limiter from settings.
 *
 * @since 2.0.0
 * @category type-level
 */
export type RequirementsOf<O> = "rateLimiter" extends keyof O
  ? [O["rateLimiter"]] extends [RateLimiter.RateLimiter | undefined] ? never : RateLimiterStore.RateLimiterStore
  : never

// constructors

/**
 * Creates a provider in the current scope. Closing the scope shuts it down: new calls fail with
 * `ProviderClosed`, calls in flight get `gracePeriod` to finish, then are interrupted. Invalid
 * options are a defect (`IllegalArgumentError`) naming the provider and the value.
 *
 * With literal options the error type holds only what is configured:
 *
 * @example
 * ```ts
 * import { Provider } from "@sluice/provider"
 * import { RateLimiterStore } from "@sluice/rate-limiter"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   const nominatim = yield* Provider.make({
 *     name: "nominatim",
 *     bulkhead: { permits: 4, maxWait: "2 seconds" },
 *     rateLimiter: { limit: 1, window: "1 second", maxWait: "30 seconds" },
 *     attemptTimeout: "5 seconds",
 *     totalTimeout: "1 minute",
 *     retry: { maxAttempts: 3 }
 *   })
 *   return yield* nominatim.call(Effect.succeed("Lyon")).pipe(
 *     Effect.catchTag("PermitWaitTimeout", () => Effect.succeed("queued too long")),
 *     Effect.catchTag("CallTimeout", () => Effect.succeed("the call was too slow"))
 *   )
 * }).pipe(Effect.scoped, Effect.provide(RateLimiterStore.layerMemory))
 * ```
 *
 * @since 2.0.0
 * @category constructors
 */
export const make: <const O extends Options>(
  options: O
) => Effect.Effect<Provider<ErrorsOf<O>>, never, Scope.Scope | RequirementsOf<O>> = internal.make as never

/**
 * Runs an effect through a provider: `effect.pipe(Provider.withProvider(nominatim, { cost: 2 }))`.
 *
 * @since 2.0.0
 * @category combinators
 */
export const withProvider: {
  <Err, const C extends CallOptions = {}>(
    provider: Provider<Err>,
    options?: (C & CallOptions) | undefined
  ): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | Err | CallErrorsOf<C>, R>
  <A, E, R, Err, const C extends CallOptions = {}>(
    self: Effect.Effect<A, E, R>,
    provider: Provider<Err>,
    options?: (C & CallOptions) | undefined
  ): Effect.Effect<A, E | Err | CallErrorsOf<C>, R>
} = internal.withProvider as never

/**
 * Sets the bulkhead lane of every call `self` makes through any provider, the HTTP middleware's
 * requests included, so that a library that takes an `HttpClient` (`@effect/ai-openai`) sends in
 * that lane without knowing of it. A call's own `lane` option wins; the innermost `withLane` wins
 * over an outer one. Fibers forked inside inherit it. A provider whose bulkhead has no lanes
 * ignores it, and one whose priority lanes do not include it uses its default lane (a call's own
 * `lane` must be one of its lanes); under fair share it names a tenant.
 *
 * @example
 * ```ts
 * import { BulkheadLanes } from "@sluice/bulkhead"
 * import { Provider } from "@sluice/provider"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   const openai = yield* Provider.make({
 *     name: "openai",
 *     bulkhead: {
 *       permits: 8,
 *       lanes: BulkheadLanes.priority({ interactive: {}, batch: { yieldFor: "30 seconds" } })
 *     }
 *   })
 *   // a chat answer passes the batch's queue
 *   return yield* openai.call(Effect.succeed("hello")).pipe(Provider.withLane("interactive"))
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 2.0.0
 * @category combinators
 */
export const withLane: {
  (lane: string): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  <A, E, R>(self: Effect.Effect<A, E, R>, lane: string): Effect.Effect<A, E, R>
} = lane.withLane

/**
 * The verdict on phase times: see `ProviderStats.verdict`.
 *
 * @since 2.0.0
 * @category stats
 */
export const verdict: (input: ProviderStats.VerdictInput) => ProviderStats.Verdict = ProviderStats.verdict

// services and layers

/**
 * A service tag for one provider, with its layers: one tag per upstream, since one tag holds one
 * value. A declared tag carries the full `ProviderError` union.
 *
 * @since 2.0.0
 * @category tags
 */
export interface TagClass<Self, Id extends string>
  extends Context.ServiceClass<Self, `@sluice/provider/${Id}`, Provider>
{
  /** The provider's name: the id given to `Tag`. */
  readonly id: Id
  /** Builds the provider once for the runtime that provides it; closing the runtime shuts it down. */
  readonly layer: <const O extends Settings>(options: O) => Layer.Layer<Self, never, RequirementsOf<O>>
  /** Reads the settings from `Config`, e.g. `Config.nested(Provider.config, "NOMINATIM")`. */
  readonly layerConfig: (
    config: Config.Config<Settings>
  ) => Layer.Layer<Self, Config.ConfigError, RateLimiterStore.RateLimiterStore>
}

/**
 * Declares the service of one provider, named by `id`:
 *
 * @example
 * ```ts
 * import { Provider } from "@sluice/provider"
 * import { Effect } from "effect"
 *
 * class Nominatim extends Provider.Tag("nominatim")<Nominatim>() {}
 *
 * const search = (q: string) => Effect.flatMap(Nominatim, (nominatim) => nominatim.call(Effect.succeed(q)))
 *
 * const main = search("Lyon").pipe(
 *   Effect.provide(Nominatim.layer({ bulkhead: { permits: 4, maxWait: "2 seconds" }, attemptTimeout: "5 seconds" }))
 * )
 * ```
 *
 * @since 2.0.0
 * @category tags
 */
export const Tag: <const Id extends string>(id: Id) => <Self>() => TagClass<Self, Id> = internal.Tag

/**
 * A layer that builds a provider once and provides it under `tag`.
 *
 * @since 2.0.0
 * @category layers
 */
export const layer: <I, const O extends Options>(
  tag: Context.Key<I, Provider>,
  options: O
) => Layer.Layer<I, never, RequirementsOf<O>> = internal.layer as never

/**
 * A layer that reads the options from `Config` and provides the provider under `tag`.
 *
 * @since 2.0.0
 * @category layers
 */
export const layerConfig: <I>(
  tag: Context.Key<I, Provider>,
  config: Config.Config<Options>
) => Layer.Layer<I, Config.ConfigError, RateLimiterStore.RateLimiterStore> = internal.layerConfig

/**
 * The settings as `Config`: `BULKHEAD_*`, an optional `RATE_LIMIT_*`, `ATTEMPT_TIMEOUT`,
 * `TOTAL_TIMEOUT`, `MAX_ATTEMPTS` with its optional `RETRY_BACKOFF_*` and `RETRY_BUDGET*` keys,
 * `CIRCUIT_CONSECUTIVE_FAILURES`, `CIRCUIT_OPEN_FOR`, `GRACE_PERIOD`. A section set in part, or a
 * negative duration, is a `ConfigError` naming the key; predicates are added with `Config.map`.
 *
 * @since 2.0.0
 * @category config
 */
export const config: Config.Config<Settings> = internalConfig.config

// metrics

/**
 * `sluice_call_seconds`: the time of each attempt's call (permit held, after the limiter),
 * labelled `name`. The permit and limiter waits are the bulkhead's `sluice_permit_wait_seconds`
 * and the limiter's `sluice_limiter_wait_seconds`.
 *
 * @since 2.0.0
 * @category metrics
 */
export const callSeconds: Metric.Histogram<number> = metrics.callSeconds

/**
 * `sluice_provider_outcomes_total`: calls by how they ended, labelled `name` and `outcome`.
 *
 * @since 2.0.0
 * @category metrics
 */
export const outcomesTotal: Metric.Counter<number> = metrics.outcomesTotal

/**
 * @since 2.0.0
 * @category metrics
 * @deprecated Use `outcomesTotal` (the same counter), named by the metric-export rule: the
 * exported metric's name without its `sluice_provider_` prefix.
 */
export const outcomes: Metric.Counter<number> = outcomesTotal

/**
 * `sluice_provider_interrupted_total`: calls whose caller interrupted them, labelled `name` and
 * `phase` (`permit_wait`, `limiter_wait`, `call`, `backoff`).
 *
 * @since 2.0.0
 * @category metrics
 */
export const interruptedTotal: Metric.Counter<number> = metrics.interruptedTotal

/**
 * @since 2.0.0
 * @category metrics
 * @deprecated Use `interruptedTotal` (the same counter), named by the metric-export rule.
 */
export const interrupted: Metric.Counter<number> = interruptedTotal

/**
 * `sluice_provider_circuit_state`: 0 closed, 1 half-open, 2 open; labelled `name`.
 *
 * @since 2.0.0
 * @category metrics
 */
export const circuitState: Metric.Gauge<number> = metrics.circuitGauge
