/**
 * A rate limiter bounds how many calls to one resource may start per window.
 *
 * Each take is one decision: the store computes the caller's start time (reserving it on every
 * limit) or refuses at once when that start is further away than `maxWait`; the caller then
 * sleeps until its start on its own timer, with no polling. Within a process a pacer checks the
 * actual starts against the same limits: when late timers wake several callers together, at most
 * `burst` start at once and the rest queue in order, so late timers never bunch starts.
 *
 * @since 0.1.0
 */
import type { NonEmptyReadonlyArray } from "effect/Array"
import type * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import type * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Metric from "effect/Metric"
import * as internal from "./internal/rateLimiter.js"
import * as RateLimiterErrors from "./RateLimiterError.js"
import type * as RateLimiterStore from "./RateLimiterStore.js"

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

/**
 * @since 0.1.0
 * @category models
 */
export interface RateLimiter {
  readonly [TypeId]: TypeId
  /** The name used in errors, metrics and spans, and the key in the store. */
  readonly name: string
  /** The limits, validated, with their defaults filled in. */
  readonly limits: NonEmptyReadonlyArray<ResolvedLimit>
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
  readonly pauseFor: (duration: Duration.DurationInput) => Effect.Effect<void, RateLimiterStore.RateLimiterStoreError>
  /** What is left of the pause, zero when not paused. */
  readonly pauseRemaining: Effect.Effect<Duration.Duration, RateLimiterStore.RateLimiterStoreError>
}

/**
 * Options of one take.
 *
 * @since 0.1.0
 * @category models
 */
export interface TakeOptions {
  /** Units this start takes: an integer from 1 to the smallest capacity of the limits. Default 1. */
  readonly cost?: number | undefined
  /** Overrides the limiter's `maxWait` for this take (a provider caps it by its total budget). */
  readonly maxWait?: Duration.DurationInput | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export type Algorithm = RateLimiterStore.Algorithm

/**
 * One limit: `limit` starts per `window`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Limit {
  /** Starts (units of cost) per window, an integer ≥ 1. */
  readonly limit: number
  /** The window, > 0 and finite. */
  readonly window: Duration.DurationInput
  /** Default `"gcra"`. */
  readonly algorithm?: Algorithm | undefined
  /**
   * GCRA only: how many starts may happen at the same instant (the bucket's depth), an integer
   * ≥ 1. Default 1: starts are evenly spaced, `window / limit` apart. Any window then holds at most
   * `limit + burst` starts.
   */
  readonly burst?: number | undefined
}

/**
 * A limit with its defaults filled in; `burst` of a window algorithm is its `limit`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResolvedLimit {
  readonly limit: number
  readonly window: Duration.Duration
  readonly algorithm: Algorithm
  readonly burst: number
}

/**
 * One limit.
 *
 * @since 0.1.0
 * @category models
 */
export interface SingleLimit extends Limit {
  /** The default wait budget of a take. `0` means never wait. Default: no bound. */
  readonly maxWait?: Duration.DurationInput | undefined
  readonly limits?: undefined
}

/**
 * Several limits at once (say 10 per second and 1,000 per day): a start happens at the earliest
 * instant all of them allow, and is charged on all of them or on none.
 *
 * @since 0.1.0
 * @category models
 */
export interface MultiLimit {
  readonly limits: NonEmptyReadonlyArray<Limit>
  /** The default wait budget of a take. `0` means never wait. Default: no bound. */
  readonly maxWait?: Duration.DurationInput | undefined
  readonly limit?: undefined
  readonly window?: undefined
  readonly algorithm?: undefined
  readonly burst?: undefined
}

/**
 * Everything but the name: what a service tag's `layer` takes.
 *
 * @since 0.1.0
 * @category models
 */
export type Settings = SingleLimit | MultiLimit

/**
 * @since 0.1.0
 * @category models
 */
export type Options = Settings & {
  /** The name used in errors, metrics and spans, and the key in the store. */
  readonly name: string
}

/**
 * The start would come later than the wait budget allows; nothing was consumed. `retryAfter` is
 * how long to wait before a take with the same budget can succeed; `limit` is the limit that set
 * the start, `undefined` when the pause did (`reason: "paused"`).
 *
 * @since 0.1.0
 * @category errors
 */
export const RateLimitExceeded: typeof RateLimiterErrors.RateLimitExceeded = RateLimiterErrors.RateLimitExceeded

/**
 * @since 0.1.0
 * @category errors
 */
export interface RateLimitExceeded extends RateLimiterErrors.RateLimitExceeded {}

/**
 * @since 0.1.0
 * @category errors
 */
export type RateLimiterError = RateLimitExceeded | RateLimiterStore.RateLimiterStoreError

/**
 * @since 0.1.0
 * @category guards
 */
export const isRateLimiter: (u: unknown) => u is RateLimiter = internal.isRateLimiter

/**
 * @since 0.1.0
 * @category guards
 */
export const isRateLimiterError: (u: unknown) => u is RateLimiterError = RateLimiterErrors.isRateLimiterError

/**
 * Creates a rate limiter. It holds no fiber and no timer of its own. The store is
 * `options.store` or else the `RateLimiterStore` service. Invalid options (a limit or window ≤ 0,
 * NaN, a burst on a window algorithm, ...) are a defect whose message names the limiter and the
 * value; so is a take whose cost no limit can ever hold.
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
 * @since 0.1.0
 * @category constructors
 */
export const make: {
  (
    options: Options & { readonly store: RateLimiterStore.Service }
  ): Effect.Effect<RateLimiter>
  (
    options: Options & { readonly store?: undefined }
  ): Effect.Effect<RateLimiter, never, RateLimiterStore.RateLimiterStore>
} = internal.make as never

/**
 * Runs an effect once the limiter lets it start:
 * `effect.pipe(RateLimiter.withRateLimiter(limiter, { cost: 2 }))`.
 *
 * @since 0.1.0
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
 * A service tag for one rate limiter, with its layers: one tag per provider, since one tag holds
 * one value.
 *
 * @since 0.1.0
 * @category tags
 */
export interface TagClass<Self, Id extends string>
  extends Context.TagClass<Self, `@sluice/rate-limiter/${Id}`, RateLimiter>
{
  /** The limiter's name: the id given to `Tag`. */
  readonly id: Id
  /** Builds the limiter once for the runtime that provides it, on the `RateLimiterStore` service. */
  readonly layer: (settings: Settings) => Layer.Layer<Self, never, RateLimiterStore.RateLimiterStore>
  /** Reads the settings from `Config`, e.g. `Config.nested(RateLimiter.config, "GEOCODER")`. */
  readonly layerConfig: (
    config: Config.Config<Settings>
  ) => Layer.Layer<Self, ConfigError.ConfigError, RateLimiterStore.RateLimiterStore>
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
 * @since 0.1.0
 * @category tags
 */
export const Tag: <const Id extends string>(id: Id) => <Self>() => TagClass<Self, Id> = internal.Tag

/**
 * A layer that builds a rate limiter once and provides it under `tag`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: <I>(
  tag: Context.Tag<I, RateLimiter>,
  options: Options
) => Layer.Layer<I, never, RateLimiterStore.RateLimiterStore> = internal.layer

/**
 * A layer that reads the options from `Config` and provides the rate limiter under `tag`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig: <I>(
  tag: Context.Tag<I, RateLimiter>,
  config: Config.Config<Options>
) => Layer.Layer<I, ConfigError.ConfigError, RateLimiterStore.RateLimiterStore> = internal.layerConfig

/**
 * One limit as `Config`, validated: `LIMIT` and `WINDOW` (a duration such as `1 second`) required,
 * `ALGORITHM` (`gcra`, `fixed-window` or `sliding-window`, default `gcra`), `BURST` (gcra only),
 * `MAX_WAIT` (a duration). Nest it per provider.
 *
 * @since 0.1.0
 * @category config
 */
export const config: Config.Config<Settings> = internal.config

/**
 * `sluice_limiter_wait_seconds`: per take that started, the time from the store's decision to the
 * start (the store's round trip excluded), by `name`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const waitSeconds: Metric.Metric.Histogram<number> = internal.waitSeconds

/**
 * `sluice_limiter_rejected_total`: takes refused because the start would come later than
 * `maxWait`, by `name` and `reason` (`quota` or `paused`).
 *
 * @since 0.1.0
 * @category metrics
 */
export const rejectedTotal: Metric.Metric.Counter<number> = internal.rejectedTotal

/**
 * `sluice_limiter_timer_lateness_seconds`: per caller that slept, how late it woke after its
 * reserved start, by `name`. What the cross-process bound `limit + burst + rate × lateness` reads.
 *
 * @since 0.1.0
 * @category metrics
 */
export const timerLatenessSeconds: Metric.Metric.Histogram<number> = internal.timerLatenessSeconds
