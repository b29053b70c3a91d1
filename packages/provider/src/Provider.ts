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
 * @since 0.1.0
 */
import type { Bulkhead } from "@sluice/bulkhead"
import type { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import type * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import type * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import type * as Metric from "effect/Metric"
import type * as Scope from "effect/Scope"
import * as internalConfig from "./internal/config.js"
import * as metrics from "./internal/metrics.js"
import * as options from "./internal/options.js"
import * as internal from "./internal/provider.js"
import * as Errors from "./ProviderError.js"
import * as ProviderStats from "./ProviderStats.js"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = internal.TypeId

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

// ---------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------

/**
 * One provider. `Err` is the union of the refusals this provider can produce; with literal
 * options (`make`, `layer`) it holds only the budgets that are configured, elsewhere it is the
 * full `ProviderError`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Provider<out Err = ProviderError> {
  readonly [TypeId]: TypeId
  /** The name used in errors, metrics (`name` label) and spans. */
  readonly name: string
  /** The provider's bulkhead (its name is the provider's). */
  readonly bulkhead: Bulkhead.Bulkhead
  /** The provider's rate limiter, if it has one. */
  readonly rateLimiter: RateLimiter.RateLimiter | undefined
  /**
   * Runs `self` through the provider: circuit breaker, then per attempt bulkhead → rate limiter →
   * attempt timeout → `self` → release, retried as the policy says, all within the total budget.
   * Per-call budgets override the provider's (and add their errors to the type).
   */
  readonly call: <A, E, R, const C extends CallOptions = {}>(
    self: Effect.Effect<A, E, R>,
    options?: C | undefined
  ) => Effect.Effect<A, E | Err | CallErrorsOf<C>, R>
  /** Counters, phase times over the last calls, and the verdict: a snapshot. */
  readonly stats: Effect.Effect<Stats>
}

/**
 * The bulkhead of a provider built from options: the bulkhead's options without its name (the
 * provider's name is used).
 *
 * @since 0.1.0
 * @category models
 */
export type BulkheadSettings = Bulkhead.Settings

/**
 * Exponential backoff between attempts: `initial × factor^(retry - 1)`, at most `max`, then
 * shortened by up to `jitter` of itself at random (0: exact delays, 1: "full jitter").
 *
 * @since 0.1.0
 * @category models
 */
export interface Backoff {
  /** Default 100 ms. */
  readonly initial?: Duration.DurationInput | undefined
  /** Default 10 s. */
  readonly max?: Duration.DurationInput | undefined
  /** Default 2. */
  readonly factor?: number | undefined
  /** A fraction from 0 to 1. Default 0.2. */
  readonly jitter?: number | undefined
}

/**
 * Stops retry storms: a retry is allowed while the retries in the sliding `window` stay below
 * `max(minRetries, ratio × first attempts)`. The window slides by tenths.
 *
 * @since 0.1.0
 * @category models
 */
export interface RetryBudget {
  /** Retries per first attempt. Default 0.1: at most 10 % extra calls. */
  readonly ratio?: number | undefined
  /** Retries always allowed per window. Default 3. */
  readonly minRetries?: number | undefined
  /** Default 10 s. */
  readonly window?: Duration.DurationInput | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface RetryOptions {
  /** Attempts in all, the first included: an integer ≥ 1. */
  readonly maxAttempts: number
  readonly backoff?: Backoff | undefined
  /**
   * Which errors are retried. Default: `CallTimeout`, and errors that carry
   * `[Provider.RetryableTypeId]: true`. `BulkheadFull`, `CircuitOpen`, `RetryBudgetExhausted`,
   * `TotalTimeout` and `ProviderClosed` are never retried, whatever the predicate says.
   */
  readonly isRetryable?: ((error: unknown) => boolean) | undefined
  /** The retry budget; `false` turns it off (then `RetryBudgetExhausted` is not in the type). Default on. */
  readonly budget?: RetryBudget | false | undefined
}

/**
 * The failure ratio over the last `window` calls (count-based).
 *
 * @since 0.1.0
 * @category models
 */
export interface FailureRatio {
  /** From 0 (exclusive) to 1. */
  readonly ratio: number
  /** The last calls considered, an integer ≥ 1. */
  readonly window: number
  /** Calls needed in the window before the ratio counts. Default: `window`. */
  readonly minimumCalls?: number | undefined
}

/**
 * Opens after `consecutiveFailures` failures in a row, or when `failureRatio` is reached (give
 * either or both; default: 5 consecutive failures). Only the call's own failures and
 * `CallTimeout` count, never a refusal by the bulkhead or the limiter.
 *
 * @since 0.1.0
 * @category models
 */
export interface CircuitBreakerOptions {
  readonly consecutiveFailures?: number | undefined
  readonly failureRatio?: FailureRatio | undefined
  /** How long the circuit stays open before a probe. Default 30 s. */
  readonly openFor?: Duration.DurationInput | undefined
  /** Which failures of the call count. Default: all. */
  readonly isFailure?: ((error: unknown) => boolean) | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The name used in errors, metrics and spans; also the bulkhead's and limiter's when built here. */
  readonly name: string
  /** A bulkhead, or its settings. */
  readonly bulkhead: Bulkhead.Bulkhead | BulkheadSettings
  /** A rate limiter, or its settings (built on the `RateLimiterStore` service). */
  readonly rateLimiter?: RateLimiter.RateLimiter | RateLimiter.Settings | undefined
  /** The budget of one attempt, around the call only (not the waits): `CallTimeout`. */
  readonly attemptTimeout?: Duration.DurationInput | undefined
  /** The budget of the whole operation, waits, attempts and backoff included: `TotalTimeout` (shorter than `attemptTimeout`, it cuts the attempt). */
  readonly totalTimeout?: Duration.DurationInput | undefined
  readonly retry?: RetryOptions | undefined
  readonly circuitBreaker?: CircuitBreakerOptions | undefined
  /** How long in-flight calls may run on when the provider's scope closes (`Infinity`: as long as they take). Default 10 s. */
  readonly gracePeriod?: Duration.DurationInput | undefined
  /** Which failures of the call are upstream signals (429s, 5xx) for the verdict. Default: none. */
  readonly isUpstreamError?: ((error: unknown) => boolean) | undefined
  /** How many recent attempts the stats keep per phase. Default 1,024. */
  readonly sampleSize?: number | undefined
}

/**
 * Everything but the name: what a service tag's `layer` takes.
 *
 * @since 0.1.0
 * @category models
 */
export type Settings = Omit<Options, "name">

/**
 * Options of one call.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallOptions {
  /** Bulkhead permits this call holds. Default 1. */
  readonly permits?: number | undefined
  /**
   * Rate limiter units this call takes: a number on every limit, or units per dimension
   * (`{ requests: 1, tokens: 1_800 }`; see `RateLimiter.Cost`). With `usage`, an estimate that
   * each attempt settles. Default 1.
   */
  readonly cost?: RateLimiter.Cost | undefined
  /**
   * The actual usage of an attempt, read from how it ended. Given, each attempt *reserves* `cost`
   * on the limiter instead of taking it, and settles the reservation when the attempt ends,
   * inside the permit, before its release: with the `Cost` this returns (dimensions it omits keep
   * their estimate), with `"release"` (the upstream never counted the call: the connection was
   * refused), or keeping the whole estimate with `undefined` (the upstream may have counted it and
   * said nothing). An attempt that ends before its call starts (the total budget ran out in the
   * limiter, an interruption) releases without asking. The exit is the call's own: its value, its
   * error, or an interruption (the caller's, `CallTimeout`, shutdown). An exception thrown here is
   * logged and keeps the estimate.
   *
   * @since 0.2.0
   */
  readonly usage?: Usage | undefined
  /** Overrides the provider's attempt budget. */
  readonly attemptTimeout?: Duration.DurationInput | undefined
  /** Overrides the provider's total budget. */
  readonly totalTimeout?: Duration.DurationInput | undefined
  /** `false`: one attempt only, e.g. for a call that is not idempotent. Default `true`. */
  readonly retry?: boolean | undefined
}

/**
 * A call's cost on the limiter: a number on every limit, or units per dimension (see
 * `RateLimiter.Cost`).
 *
 * @since 0.2.0
 * @category models
 */
export type Cost = RateLimiter.Cost

/**
 * How an attempt's reservation is settled: the actual usage, `"release"`, or `undefined` to keep
 * the estimate (see `CallOptions.usage`).
 *
 * @since 0.2.0
 * @category models
 */
export type Settlement = RateLimiter.Cost | "release" | undefined

/**
 * @since 0.2.0
 * @category models
 */
export type Usage = (exit: Exit.Exit<unknown, unknown>) => Settlement

/**
 * @since 0.1.0
 * @category models
 */
export type Outcome = ProviderStats.Outcome

/**
 * @since 0.1.0
 * @category models
 */
export type CircuitState = ProviderStats.CircuitState

/**
 * @since 0.1.0
 * @category models
 */
export type PhaseSummary = ProviderStats.PhaseSummary

/**
 * @since 0.1.0
 * @category models
 */
export type Binding = ProviderStats.Binding

/**
 * @since 0.1.0
 * @category models
 */
export type Verdict = ProviderStats.Verdict

/**
 * @since 0.2.0
 * @category models
 */
export type DimensionLoad = ProviderStats.DimensionLoad

/**
 * Counters, phase times and the verdict of one provider: see the module `ProviderStats`.
 *
 * @since 0.1.0
 * @category models
 */
export type Stats = ProviderStats.Stats

/**
 * @since 0.1.0
 * @category models
 */
export type VerdictInput = ProviderStats.VerdictInput

/**
 * Where a call was: the `phase` of `sluice_provider_interrupted_total` and of `TotalTimeout`.
 *
 * @since 0.1.0
 * @category models
 */
export type Phase = Errors.Phase

// ---------------------------------------------------------------------------------------------
// errors: declared in the module `ProviderError`, here too so that one import gives them all
// ---------------------------------------------------------------------------------------------

/**
 * See `ProviderError.CallTimeout`.
 *
 * @since 0.1.0
 * @category errors
 */
export const CallTimeout: typeof Errors.CallTimeout = Errors.CallTimeout

/**
 * @since 0.1.0
 * @category errors
 */
export type CallTimeout = Errors.CallTimeout

/**
 * See `ProviderError.TotalTimeout`.
 *
 * @since 0.1.0
 * @category errors
 */
export const TotalTimeout: typeof Errors.TotalTimeout = Errors.TotalTimeout

/**
 * @since 0.1.0
 * @category errors
 */
export type TotalTimeout = Errors.TotalTimeout

/**
 * See `ProviderError.CircuitOpen`.
 *
 * @since 0.1.0
 * @category errors
 */
export const CircuitOpen: typeof Errors.CircuitOpen = Errors.CircuitOpen

/**
 * @since 0.1.0
 * @category errors
 */
export type CircuitOpen = Errors.CircuitOpen

/**
 * See `ProviderError.RetryBudgetExhausted`.
 *
 * @since 0.1.0
 * @category errors
 */
export const RetryBudgetExhausted: typeof Errors.RetryBudgetExhausted = Errors.RetryBudgetExhausted

/**
 * @since 0.1.0
 * @category errors
 */
export type RetryBudgetExhausted = Errors.RetryBudgetExhausted

/**
 * See `ProviderError.ProviderClosed`.
 *
 * @since 0.1.0
 * @category errors
 */
export const ProviderClosed: typeof Errors.ProviderClosed = Errors.ProviderClosed

/**
 * @since 0.1.0
 * @category errors
 */
export type ProviderClosed = Errors.ProviderClosed

/**
 * See `ProviderError.BulkheadFull`.
 *
 * @since 0.1.0
 * @category errors
 */
export const BulkheadFull: typeof Errors.BulkheadFull = Errors.BulkheadFull

/**
 * @since 0.1.0
 * @category errors
 */
export type BulkheadFull = Errors.BulkheadFull

/**
 * See `ProviderError.PermitWaitTimeout`.
 *
 * @since 0.1.0
 * @category errors
 */
export const PermitWaitTimeout: typeof Errors.PermitWaitTimeout = Errors.PermitWaitTimeout

/**
 * @since 0.1.0
 * @category errors
 */
export type PermitWaitTimeout = Errors.PermitWaitTimeout

/**
 * See `ProviderError.RateLimitExceeded`.
 *
 * @since 0.1.0
 * @category errors
 */
export const RateLimitExceeded: typeof Errors.RateLimitExceeded = Errors.RateLimitExceeded

/**
 * @since 0.1.0
 * @category errors
 */
export type RateLimitExceeded = Errors.RateLimitExceeded

/**
 * See `ProviderError.CostExceedsCapacity`.
 *
 * @since 0.2.0
 * @category errors
 */
export const CostExceedsCapacity: typeof Errors.CostExceedsCapacity = Errors.CostExceedsCapacity

/**
 * @since 0.2.0
 * @category errors
 */
export type CostExceedsCapacity = Errors.CostExceedsCapacity

/**
 * See `ProviderError.RateLimiterStoreError`.
 *
 * @since 0.1.0
 * @category errors
 */
export const RateLimiterStoreError: typeof Errors.RateLimiterStoreError = Errors.RateLimiterStoreError

/**
 * @since 0.1.0
 * @category errors
 */
export type RateLimiterStoreError = Errors.RateLimiterStoreError

/**
 * Every refusal a provider can produce.
 *
 * @since 0.1.0
 * @category errors
 */
export type ProviderError = Errors.ProviderError

/**
 * @since 0.1.0
 * @category guards
 */
export const isProvider: (u: unknown) => u is Provider<unknown> = internal.isProvider

/**
 * True for every member of `ProviderError`, the bulkhead's and the limiter's errors included.
 *
 * @since 0.1.0
 * @category guards
 */
export const isProviderError: (u: unknown) => u is ProviderError = Errors.isProviderError

/**
 * An error that carries `[RetryableTypeId]: true` is retried by the default retry predicate.
 *
 * @since 0.1.0
 * @category retries
 */
export const RetryableTypeId: unique symbol = options.RetryableTypeId

/**
 * @since 0.1.0
 * @category retries
 */
export type RetryableTypeId = typeof RetryableTypeId

/**
 * The default retry predicate: `CallTimeout`, and errors marked with `RetryableTypeId`.
 *
 * @since 0.1.0
 * @category retries
 */
export const isRetryable: (error: unknown) => boolean = options.isRetryable

// ---------------------------------------------------------------------------------------------
// type-level: which errors the options can produce
// ---------------------------------------------------------------------------------------------

/**
 * Whether the options configure `K`: true when the key may hold a value other than `undefined`
 * (an optional key of a widened type counts as configured).
 */
type Configures<O, K extends PropertyKey> = K extends keyof O ? [O[K]] extends [undefined] ? false : true
  : false

type When<C extends boolean, T> = C extends true ? T : never

/**
 * The bulkhead errors of a bulkhead option: all of them for a given bulkhead, and for settings
 * `BulkheadFull` only with `maxWaiting`, `PermitWaitTimeout` only with `maxWait`.
 */
type BulkheadErrorsOf<B> = B extends Bulkhead.Bulkhead ? Bulkhead.BulkheadError
  : B extends undefined ? never
  : When<Configures<B, "maxWaiting">, BulkheadFull> | When<Configures<B, "maxWait">, PermitWaitTimeout>

/** The retry budget's error, unless the budget is off. */
type RetryErrorsOf<R> = R extends undefined ? never : R extends { readonly budget: false } ? never
: RetryBudgetExhausted

/**
 * The refusals a provider built from options `O` can produce.
 *
 * @since 0.1.0
 * @category type-level
 */
export type ErrorsOf<O> =
  | ProviderClosed
  | ("bulkhead" extends keyof O ? BulkheadErrorsOf<O["bulkhead"]> : never)
  | When<Configures<O, "rateLimiter">, RateLimitExceeded | CostExceedsCapacity | RateLimiterStoreError>
  | When<Configures<O, "attemptTimeout">, CallTimeout>
  | When<Configures<O, "totalTimeout">, TotalTimeout>
  | When<Configures<O, "circuitBreaker">, CircuitOpen>
  | ("retry" extends keyof O ? RetryErrorsOf<O["retry"]> : never)

/**
 * The errors the per-call budgets add.
 *
 * @since 0.1.0
 * @category type-level
 */
export type CallErrorsOf<C> =
  | When<Configures<C, "attemptTimeout">, CallTimeout>
  | When<Configures<C, "totalTimeout">, TotalTimeout>

/**
 * What building a provider from options `O` needs: the `RateLimiterStore` when it builds its
 * limiter from settings.
 *
 * @since 0.1.0
 * @category type-level
 */
export type RequirementsOf<O> = "rateLimiter" extends keyof O
  ? [O["rateLimiter"]] extends [RateLimiter.RateLimiter | undefined] ? never : RateLimiterStore.RateLimiterStore
  : never

// ---------------------------------------------------------------------------------------------
// constructors
// ---------------------------------------------------------------------------------------------

/**
 * Creates a provider in the current scope. Closing the scope shuts it down: new calls fail with
 * `ProviderClosed`, calls in flight get `gracePeriod` to finish, then are interrupted. Invalid
 * options are a defect (`IllegalArgumentException`) naming the provider and the value.
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
 * @since 0.1.0
 * @category constructors
 */
export const make: <const O extends Options>(
  options: O
) => Effect.Effect<Provider<ErrorsOf<O>>, never, Scope.Scope | RequirementsOf<O>> = internal.make as never

/**
 * Runs an effect through a provider: `effect.pipe(Provider.withProvider(nominatim, { cost: 2 }))`.
 *
 * @since 0.1.0
 * @category combinators
 */
export const withProvider: {
  <Err, const C extends CallOptions = {}>(
    provider: Provider<Err>,
    options?: C | undefined
  ): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | Err | CallErrorsOf<C>, R>
  <A, E, R, Err, const C extends CallOptions = {}>(
    self: Effect.Effect<A, E, R>,
    provider: Provider<Err>,
    options?: C | undefined
  ): Effect.Effect<A, E | Err | CallErrorsOf<C>, R>
} = internal.withProvider as never

/**
 * The verdict on phase times: see `ProviderStats.verdict`.
 *
 * @since 0.1.0
 * @category stats
 */
export const verdict: (input: VerdictInput) => Verdict = ProviderStats.verdict

// ---------------------------------------------------------------------------------------------
// services and layers
// ---------------------------------------------------------------------------------------------

/**
 * A service tag for one provider, with its layers: one tag per upstream, since one tag holds one
 * value. A declared tag carries the full `ProviderError` union.
 *
 * @since 0.1.0
 * @category tags
 */
export interface TagClass<Self, Id extends string> extends Context.TagClass<Self, `@sluice/provider/${Id}`, Provider> {
  /** The provider's name: the id given to `Tag`. */
  readonly id: Id
  /** Builds the provider once for the runtime that provides it; closing the runtime shuts it down. */
  readonly layer: <const O extends Settings>(options: O) => Layer.Layer<Self, never, RequirementsOf<O>>
  /** Reads the settings from `Config`, e.g. `Config.nested(Provider.config, "NOMINATIM")`. */
  readonly layerConfig: (
    config: Config.Config<Settings>
  ) => Layer.Layer<Self, ConfigError.ConfigError, RateLimiterStore.RateLimiterStore>
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
 * @since 0.1.0
 * @category tags
 */
export const Tag: <const Id extends string>(id: Id) => <Self>() => TagClass<Self, Id> = internal.Tag

/**
 * A layer that builds a provider once and provides it under `tag`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: <I, const O extends Options>(
  tag: Context.Tag<I, Provider>,
  options: O
) => Layer.Layer<I, never, RequirementsOf<O>> = internal.layer as never

/**
 * A layer that reads the options from `Config` and provides the provider under `tag`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig: <I>(
  tag: Context.Tag<I, Provider>,
  config: Config.Config<Options>
) => Layer.Layer<I, ConfigError.ConfigError, RateLimiterStore.RateLimiterStore> = internal.layerConfig

/**
 * The settings as `Config`: the bulkhead under `BULKHEAD` (`BULKHEAD_PERMITS`, ...), an optional
 * limiter under `RATE_LIMIT` (`RATE_LIMIT_LIMIT`, `RATE_LIMIT_WINDOW`, ...), `ATTEMPT_TIMEOUT`,
 * `TOTAL_TIMEOUT`, `MAX_ATTEMPTS` with its optional `RETRY_BACKOFF_*` and `RETRY_BUDGET*` keys,
 * `CIRCUIT_CONSECUTIVE_FAILURES`, `CIRCUIT_OPEN_FOR`, `GRACE_PERIOD`. A section set in part is a
 * `ConfigError` naming the missing key; a negative duration one naming the value. Predicates (`isRetryable`, `isUpstreamError`, ...) are not configuration: add
 * them with `Config.map`.
 *
 * @since 0.1.0
 * @category config
 */
export const config: Config.Config<Settings> = internalConfig.config

// ---------------------------------------------------------------------------------------------
// metrics
// ---------------------------------------------------------------------------------------------

/**
 * `sluice_call_seconds`: the time of each attempt's call (permit held, after the limiter),
 * labelled `name`. The permit and limiter waits are the bulkhead's `sluice_permit_wait_seconds`
 * and the limiter's `sluice_limiter_wait_seconds`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const callSeconds: Metric.Metric.Histogram<number> = metrics.callSeconds

/**
 * `sluice_provider_outcomes_total`: calls by how they ended, labelled `name` and `outcome`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const outcomes: Metric.Metric.Counter<number> = metrics.outcomesTotal

/**
 * `sluice_provider_interrupted_total`: calls whose caller interrupted them, labelled `name` and
 * `phase` (`permit_wait`, `limiter_wait`, `call`, `backoff`).
 *
 * @since 0.1.0
 * @category metrics
 */
export const interrupted: Metric.Metric.Counter<number> = metrics.interruptedTotal

/**
 * `sluice_provider_circuit_state`: 0 closed, 1 half-open, 2 open; labelled `name`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const circuitState: Metric.Metric.Gauge<number> = metrics.circuitGauge
