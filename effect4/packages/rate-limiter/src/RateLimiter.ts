/**
 * A rate limiter bounds how many calls to one resource may start per window.
 *
 * Each take is one decision: the store computes the caller's start time (reserving it on every
 * limit) or refuses at once when that start is further away than `maxWait`; the caller then
 * sleeps until its start on its own timer, with no polling. Within a process a pacer checks the
 * actual starts against the same limits: when late timers wake several callers together, at most
 * `burst` start at once and the rest queue in order, so late timers never bunch starts.
 *
 * Limits may be named dimensions with units of their own (requests, tokens): a take's cost is then
 * given per dimension, and `reserve` returns a reservation that is settled with the actual usage
 * once known (LLM tokens), while `tighten` applies what an upstream's rate-limit headers say.
 *
 * @since 2.0.0
 */
import type { NonEmptyReadonlyArray } from "effect/Array"
import type * as Config from "effect/Config"
import type * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as layers from "./internal/layers.js"
import * as internal from "./internal/rateLimiter.js"
import * as settings from "./internal/settings.js"
import * as RateLimiterErrors from "./RateLimiterError.js"
import type { ResolvedLimit, Settings } from "./RateLimiterLimits.js"
import type * as RateLimiterStore from "./RateLimiterStore.js"

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

/**
 * @since 2.0.0
 * @category models
 */
export interface RateLimiter {
  readonly [TypeId]: TypeId
  /** The name used in errors, metrics and spans, and the key in the store. */
  readonly name: string
  /** The limits, validated, with their defaults filled in. */
  readonly limits: NonEmptyReadonlyArray<ResolvedLimit>
  /**
   * The dimensions of the limits, each once, in the order of the limits.
   *
   * @since 2.0.0
   */
  readonly dimensions: NonEmptyReadonlyArray<string>
  /** The default wait budget of a take; `Duration.infinity` when there is none. */
  readonly maxWait: Duration.Duration
  /**
   * Waits until a start of `cost` units (default 1) is allowed by every limit, then returns: the
   * caller starts. Fails with `RateLimitExceeded`, consuming nothing, when the start is further
   * away than `maxWait` (the store's delay, a later pause and the pacer's hold together).
   * Interrupted while it waits, the caller gives its slot back where no start was decided on top
   * of it.
   */
  readonly take: (options?: TakeOptions | undefined) => Effect.Effect<void, RateLimiterError>
  /**
   * Waits exactly as `take` does (same budget, same errors), then returns the reservation of the
   * start: settle it with the actual usage once known, or release it when the upstream never
   * counted the call. A reservation neither settled nor released keeps its estimate, the safe
   * side: the upstream may have counted it.
   *
   * @since 2.0.0
   */
  readonly reserve: (options?: TakeOptions | undefined) => Effect.Effect<Reservation, RateLimiterError>
  /**
   * Applies what the upstream said about its quota (parsed from response headers), never
   * loosening: a `remaining` below this limiter's own view moves that dimension's state down to
   * it (for every process, with a shared store), `remaining: 0` also holds the dimension's
   * starts until `resetAfter`, and a header `limit` never changes a configured one. An
   * observation applies to the limit of its dimension whose configured `limit` is nearest its
   * `limit` (the one with the shortest window when it gives none, or on a tie); one without
   * `remaining` changes nothing. An unknown dimension, a negative or non-integer `remaining`, a
   * `resetAfter` that is not a finite duration ≥ 0 (the observation's `remaining` still applies),
   * an observation that is not a record, or `observations` that are not an array, are ignored with
   * a warning naming the limiter and the value (headers are input, not code); a `resetAfter`
   * beyond `maxResetAfter` is read as `maxResetAfter`, with a warning when `remaining` is 0.
   *
   * @since 2.0.0
   */
  readonly tighten: (
    observations: ReadonlyArray<Observation>
  ) => Effect.Effect<void, RateLimiterStore.RateLimiterStoreError>
  /** `take`, then `self`. */
  readonly run: <A, E, R>(
    self: Effect.Effect<A, E, R>,
    options?: TakeOptions | undefined
  ) => Effect.Effect<A, E | RateLimiterError, R>
  /**
   * Pauses the limiter for `duration` from now, for every caller that shares its store key
   * (extends a pause, never shortens one): fed from an upstream `Retry-After`. Callers of this
   * process already sleeping are held until the pause ends too.
   */
  readonly pauseFor: (duration: Duration.Input) => Effect.Effect<void, RateLimiterStore.RateLimiterStoreError>
  /** What is left of the pause, zero when not paused. */
  readonly pauseRemaining: Effect.Effect<Duration.Duration, RateLimiterStore.RateLimiterStoreError>
}

/**
 * The cost of one start, or a reservation's actual usage.
 *
 * - a number: that many units on every limit (an integer ≥ 1 for a take, ≥ 0 for a settle);
 * - a record: units per dimension, integers ≥ 0 (`{ requests: 1, tokens: 1_800 }`); a dimension it
 *   does not name is charged 0 (a settle: keeps its estimate). A name that matches no dimension is
 *   a defect naming the limiter and the name: a typo must not bypass a limit.
 *
 * A cost above what a limit of its dimension can ever hold fails with `CostExceedsCapacity`.
 *
 * @since 2.0.0
 * @category models
 */
export type Cost = number | Readonly<Record<string, number>>

/**
 * Options of one take.
 *
 * @since 2.0.0
 * @category models
 */
export interface TakeOptions {
  /** Units this start takes, per dimension or on every limit (see `Cost`). Default 1. */
  readonly cost?: Cost | undefined
  /** Overrides the limiter's `maxWait` for this take (a provider caps it by its total budget). */
  readonly maxWait?: Duration.Input | undefined
}

/**
 * A start reserved by `reserve`, whose usage is not known yet.
 *
 * @since 2.0.0
 * @category models
 */
export interface Reservation {
  /** The limiter's name. */
  readonly name: string
  /** The estimate charged, per dimension of the limiter (0 where the take named none). */
  readonly cost: Readonly<Record<string, number>>
  /**
   * Charges the actual usage instead of the estimate, on each dimension `actual` gives (one it
   * omits keeps its estimate). More than estimated: the difference is charged now, later
   * starts pay it, this caller never waits. Less: the unused part comes back where that cannot
   * create an extra start in any window. Uninterruptible, and once per reservation: a second
   * `settle`, or a `release` after it, is a no-op. An invalid `actual` (negative, not an
   * integer, an unknown dimension) is a defect naming the limiter and the value.
   */
  readonly settle: (actual: Cost) => Effect.Effect<void, RateLimiterStore.RateLimiterStoreError>
  /**
   * Gives the whole reservation back (the upstream never counted the call: connection refused,
   * refused by a bulkhead after the limiter), where that cannot create an extra start: exactly
   * when it is still the latest reservation of its key (the store's `refund`), otherwise as a
   * settle with actual usage 0 on every dimension. Uninterruptible; a no-op after a `settle`
   * or `release`.
   */
  readonly release: Effect.Effect<void, RateLimiterStore.RateLimiterStoreError>
}

/**
 * What an upstream said about one dimension's quota, typically parsed from its response
 * headers (`x-ratelimit-remaining-tokens`, `anthropic-ratelimit-requests-remaining`, ...).
 *
 * @since 2.0.0
 * @category models
 */
export interface Observation {
  readonly dimension: string
  /** The upstream's limit: picks which limit of the dimension is meant; never raises one. */
  readonly limit?: number | undefined
  /** Units the upstream still allows now. */
  readonly remaining?: number | undefined
  /**
   * How long until the upstream resets the quota (read with `remaining: 0`), at most the limiter's
   * `maxResetAfter` (one hour by default): a longer one is read as that, with a warning.
   */
  readonly resetAfter?: Duration.Input | undefined
}

/**
 * The limits, from `RateLimiterLimits`.
 *
 * @since 2.0.0
 * @category models
 */
export type { Algorithm, Limit, MultiLimit, ResolvedLimit, Settings, SingleLimit } from "./RateLimiterLimits.js"

/**
 * @since 2.0.0
 * @category models
 */
export type Options = Settings & {
  /** The name used in errors, metrics and spans, and the key in the store. */
  readonly name: string
}

/**
 * The start would come later than the wait budget allows (see `RateLimiterError`).
 *
 * @since 2.0.0
 * @category errors
 */
export const RateLimitExceeded: typeof RateLimiterErrors.RateLimitExceeded = RateLimiterErrors.RateLimitExceeded

/**
 * @since 2.0.0
 * @category errors
 */
export interface RateLimitExceeded extends RateLimiterErrors.RateLimitExceeded {}

/**
 * A take's cost is more than a limit can ever hold (see `RateLimiterError`).
 *
 * @since 2.0.0
 * @category errors
 */
export const CostExceedsCapacity: typeof RateLimiterErrors.CostExceedsCapacity = RateLimiterErrors.CostExceedsCapacity

/**
 * @since 2.0.0
 * @category errors
 */
export interface CostExceedsCapacity extends RateLimiterErrors.CostExceedsCapacity {}

/**
 * @since 2.0.0
 * @category errors
 */
export type RateLimiterError = RateLimitExceeded | CostExceedsCapacity | RateLimiterStore.RateLimiterStoreError

/**
 * @since 2.0.0
 * @category guards
 */
export const isRateLimiter: (u: unknown) => u is RateLimiter = internal.isRateLimiter

/**
 * @since 2.0.0
 * @category guards
 */
export const isRateLimiterError: (u: unknown) => u is RateLimiterError = RateLimiterErrors.isRateLimiterError

/**
 * Creates a rate limiter. It holds no fiber and no timer of its own. The store is
 * `options.store` or else the `RateLimiterStore` service. Invalid options (a limit or window ≤ 0,
 * NaN, a burst on a window algorithm, ...) are a defect whose message names the limiter and the
 * value; a take whose cost a limit can never hold fails with `CostExceedsCapacity`.
 *
 * @example
 * ```ts
 * import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   // 10 starts per second, evenly spaced, and 1,000 per UTC day
 *   const limiter = yield* RateLimiter.make({
 *     name: "geocoder",
 *     limits: [{ limit: 10, window: "1 second" }, { limit: 1000, window: "1 day", algorithm: "fixed-window" }],
 *     maxWait: "30 seconds"
 *   })
 *   yield* Effect.forEach([1, 2, 3], (n) => limiter.run(Effect.succeed(n)), { concurrency: "unbounded" })
 * }).pipe(Effect.provide(RateLimiterStore.layerMemory))
 * ```
 *
 * @since 2.0.0
 * @category constructors
 */
export const make: {
  (options: Options & { readonly store: RateLimiterStore.Service }): Effect.Effect<RateLimiter>
  (
    options: Options & { readonly store?: undefined }
  ): Effect.Effect<RateLimiter, never, RateLimiterStore.RateLimiterStore>
} = internal.make as never

/**
 * Runs an effect once the limiter lets it start:
 * `effect.pipe(RateLimiter.withRateLimiter(limiter, { cost: 2 }))`.
 *
 * @since 2.0.0
 * @category combinators
 */
export const withRateLimiter: {
  (
    limiter: RateLimiter,
    options?: TakeOptions | undefined
  ): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | RateLimiterError, R>
  <A, E, R>(
    self: Effect.Effect<A, E, R>,
    limiter: RateLimiter,
    options?: TakeOptions | undefined
  ): Effect.Effect<A, E | RateLimiterError, R>
} = internal.withRateLimiter

/**
 * A service key for one rate limiter (a `Context.Service` class), with its layers: one key per
 * provider, since one key holds one value. Each layer value builds its own limiter; the store is
 * the `RateLimiterStore` service, so limiters of the same name on one store share one quota.
 *
 * @since 2.0.0
 * @category tags
 */
export interface TagClass<Self, Id extends string>
  extends Context.ServiceClass<Self, `@sluice/rate-limiter/${Id}`, RateLimiter>
{
  /** The limiter's name: the id given to `Tag`. */
  readonly id: Id
  /** Builds the limiter once for the runtime that provides it, on the `RateLimiterStore` service. */
  readonly layer: (settings: Settings) => Layer.Layer<Self, never, RateLimiterStore.RateLimiterStore>
  /** Reads the settings from `Config`, e.g. `Config.nested(RateLimiter.config, "GEOCODER")`. */
  readonly layerConfig: (
    config: Config.Config<Settings>
  ) => Layer.Layer<Self, Config.ConfigError, RateLimiterStore.RateLimiterStore>
}

/**
 * Declares the service of one rate limiter, named by `id`:
 *
 * @example
 * ```ts
 * import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
 * import { Effect, Layer } from "effect"
 *
 * class Nominatim extends RateLimiter.Tag("nominatim")<Nominatim>() {}
 *
 * const lookup = (q: string) => Effect.flatMap(Nominatim, (limiter) => limiter.run(Effect.succeed(q)))
 *
 * const NominatimLive = Nominatim.layer({ limit: 1, window: "1 second", maxWait: "10 seconds" }).pipe(
 *   Layer.provide(RateLimiterStore.layerMemory)
 * )
 * const main = lookup("Lyon").pipe(Effect.provide(NominatimLive))
 * ```
 *
 * @since 2.0.0
 * @category tags
 */
export const Tag: <const Id extends string>(id: Id) => <Self>() => TagClass<Self, Id> = layers.Tag

/**
 * A layer that builds a rate limiter once and provides it under `tag`.
 *
 * @since 2.0.0
 * @category layers
 */
export const layer: <I>(
  tag: Context.Key<I, RateLimiter>,
  options: Options
) => Layer.Layer<I, never, RateLimiterStore.RateLimiterStore> = layers.layer

/**
 * A layer that reads the options from `Config` and provides the rate limiter under `tag`.
 *
 * @since 2.0.0
 * @category layers
 */
export const layerConfig: <I>(
  tag: Context.Key<I, RateLimiter>,
  config: Config.Config<Options>
) => Layer.Layer<I, Config.ConfigError, RateLimiterStore.RateLimiterStore> = layers.layerConfig

/**
 * One limit as `Config`, decoded through the same schema as the options: `LIMIT` and `WINDOW` (a
 * duration such as `1 second`) required, `ALGORITHM` (`gcra`, `fixed-window` or `sliding-window`,
 * default `gcra`), `BURST` (gcra only), `MAX_WAIT` (a duration, or `Infinity`), `DIMENSION` (the
 * limit's dimension, default `default`). Nest it per provider.
 *
 * @since 2.0.0
 * @category config
 */
export const config: Config.Config<Settings> = settings.config

/**
 * The limiter's metrics, from `RateLimiterMetrics`.
 *
 * @since 2.0.0
 * @category metrics
 */
export {
  actualUnitsTotal,
  estimateErrorRatio,
  rejectedTotal,
  reservedUnitsTotal,
  timerLatenessSeconds,
  waitSeconds
} from "./RateLimiterMetrics.js"
