/**
 * A bulkhead bounds how many calls to one resource are in flight at once.
 *
 * A released permit goes straight to the next waiter in the same step: by default the oldest, so
 * a newcomer never barges past the queue, and a heavy (weighted) waiter at the head is never
 * overtaken by lighter ones behind it; with `order: "lifo"`, the newest. Waiting is budgeted
 * (`maxWait`) and the queue is bounded (`maxWaiting`); each refusal is its own typed error.
 *
 * @since 2.0.0
 */
import type * as Config from "effect/Config"
import type * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Metric from "effect/Metric"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as BulkheadErrors from "./BulkheadError.js"
import type * as BulkheadLanes from "./BulkheadLanes.js"
import * as internal from "./internal/bulkhead.js"
import * as internalConfig from "./internal/config.js"
import * as layers from "./internal/layers.js"
import * as metrics from "./internal/metrics.js"
import * as validation from "./internal/validation.js"

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
 * A bulkhead. `E` is what its store can add to a call beyond `BulkheadError`: `never` for the
 * local bulkhead (the default, so `Bulkhead` is unchanged for it); a bulkhead kept elsewhere (on
 * Redis) names its store's error, and a `Provider` given it carries that error in its type.
 *
 * @since 2.0.0
 * @category models
 */
export interface Bulkhead<out E = never> {
  readonly [TypeId]: TypeId
  /** The `name` option; a provider names the bulkhead it builds after itself. */
  readonly name: string
  /** The `maxPermits` option (default `permits`): the most permits this bulkhead can ever have. */
  readonly maxPermits: number
  /**
   * How long a caller may wait for its permits (`Duration.infinity` when unbounded), so that a
   * bulkhead passed as an instance carries its budget: a provider reads it for its tie rule.
   */
  readonly maxWait: Duration.Duration
  /**
   * For a bulkhead with `lanes`: where a call naming `lane` waits, the lane's name (for
   * `undefined`, the default lane: priority's last, fair share's `BulkheadLanes.defaultLane`) and
   * how long it may wait there; `undefined` for a lane a priority bulkhead does not declare (a
   * call naming it is a defect). Makes no lane. Absent without lanes, where `lane` is ignored. A
   * provider reads it to bound a call's permit wait by its total budget and to report per lane.
   */
  readonly laneOf?: ((lane: string | undefined) => BulkheadLanes.LaneInfo | undefined) | undefined
  /**
   * Runs `self` while holding `permits` permits (default 1). The permits are returned exactly once
   * when `self` ends, whether it succeeds, fails, dies or is interrupted.
   */
  readonly run: <A, E2, R>(
    self: Effect.Effect<A, E2, R>,
    options?: RunOptions | undefined
  ) => Effect.Effect<A, E2 | BulkheadError | E, R>
  /**
   * Takes `permits` permits for the lifetime of the current scope: for work whose end is not the end
   * of one effect, such as a response body read after the call returns.
   */
  readonly acquire: (options?: RunOptions | undefined) => Effect.Effect<void, BulkheadError | E, Scope.Scope>
  /**
   * Changes the number of permits, between 1 and `maxPermits`. Growing hands the new permits to the
   * waiters at once; shrinking pre-empts nobody: holders finish, and new grants wait until the
   * permits in use fall below the new size.
   */
  readonly resize: (permits: number) => Effect.Effect<void, E>
  /**
   * A snapshot of the counters, never a reservation: acting on it does not hold anything. It never
   * fails: a bulkhead whose store cannot answer gives the last snapshot it read.
   */
  readonly stats: Effect.Effect<Stats>
}

/**
 * Options of one call.
 *
 * @since 2.0.0
 * @category models
 */
export interface RunOptions {
  /** Permits this call needs, an integer from 1 to `maxPermits`. Default 1. */
  readonly permits?: number | undefined
  /**
   * @deprecated Use `permits`: `cost` is a rate limiter's word, for units of its quota. Read when
   * `permits` is not given.
   */
  readonly cost?: number | undefined
  /** Overrides the bulkhead's `maxWait` (and its lane's) for this call. */
  readonly maxWait?: Duration.Input | undefined
  /**
   * The call's lane, for a bulkhead with `lanes`: a lane it declares (priority) or any name (fair
   * share). Default: the last lane (priority) or `"default"` (fair share). A bulkhead without
   * lanes ignores it, so that one lane can be set for calls through several bulkheads.
   */
  readonly lane?: string | undefined
}

/**
 * Which waiter a released permit goes to.
 *
 * - `"fifo"` (default): the oldest. Fair, and the only order with a bounded wait for everyone.
 * - `"lifo"`: the newest. Under overload the newest callers are the ones still likely to want the
 *   answer; the oldest are left to time out. Use it with `maxWait`.
 *
 * @since 2.0.0
 * @category models
 */
export type Order = "fifo" | "lifo"

/**
 * Everything but the name: what a service tag's `layer` takes, and what a provider builds its
 * own bulkhead from (named after the provider).
 *
 * @since 2.0.0
 * @category models
 */
export interface Settings {
  /** Permits at start: how many calls (of 1 permit each) may be in flight at once. An integer ≥ 1. */
  readonly permits: number
  /** The ceiling for `resize`, and what pools are sized from. Default: `permits`. */
  readonly maxPermits?: number | undefined
  /**
   * How many callers may queue for a permit. A caller arriving at a full queue fails at once with
   * `BulkheadFull`. `0` means never queue. Default: unbounded.
   */
  readonly maxWaiting?: number | undefined
  /**
   * How long a caller may wait for a permit before failing with `PermitWaitTimeout`. Default:
   * no limit (a total timeout around the call still applies).
   */
  readonly maxWait?: Duration.Input | undefined
  /** Which waiter a released permit goes to. Default `"fifo"`. Not taken with `lanes`. */
  readonly order?: Order | undefined
  /**
   * Several kinds of callers on the one pool: `BulkheadLanes.priority(...)` (interactive before
   * batch, with aging) or `BulkheadLanes.fairShare(...)` (tenants by weight). Default: one queue.
   */
  readonly lanes?: BulkheadLanes.Lanes | undefined
}

/**
 * The schema (on `@sluice/options`) of the settings every bulkhead has, local or distributed:
 * `permits`, `maxPermits`, `maxWaiting`, `maxWait`, and the rule that `maxPermits` is at least
 * `permits`. A package whose bulkhead takes them builds its schema on this one, so that both refuse
 * the same values with the same sentence.
 *
 * @since 2.0.0
 * @category schemas
 */
export const LimitsSchema: Schema.Codec<
  Omit<Settings, "maxWait" | "order" | "lanes"> & { readonly maxWait?: Duration.Duration | undefined },
  Omit<Settings, "order" | "lanes">
> = validation.Limits

/**
 * @since 2.0.0
 * @category models
 */
export interface Options extends Settings {
  /** The name used in errors, metrics and spans. */
  readonly name: string
}

/**
 * @since 2.0.0
 * @category models
 */
export interface Stats {
  readonly name: string
  /** The current number of permits. */
  readonly permits: number
  readonly maxPermits: number
  /** Permits held right now (a call that needs 3 holds 3). */
  readonly inFlight: number
  /** Calls holding permits right now. */
  readonly holders: number
  /** Callers queued for a permit. */
  readonly waiting: number
  /** Permits the queued callers are asking for in total. */
  readonly waitingPermits: number
  /** The queue bound, `Infinity` when unbounded. */
  readonly maxWaiting: number
  /**
   * Each lane's counters, for a bulkhead with `lanes` (a fair-share lane once seen).
   */
  readonly lanes?: ReadonlyArray<BulkheadLanes.LaneStats> | undefined
}

/**
 * The queue was at `maxWaiting` when the caller arrived; it failed at once and holds nothing.
 *
 * @since 2.0.0
 * @category errors
 */
export const BulkheadFull: typeof BulkheadErrors.BulkheadFull = BulkheadErrors.BulkheadFull

/**
 * @since 2.0.0
 * @category errors
 */
export interface BulkheadFull extends BulkheadErrors.BulkheadFull {}

/**
 * The caller waited `maxWait` for a permit without getting one; it left the queue and holds
 * nothing. `aheadWhenQueued` is how many callers were queued before it when it arrived.
 *
 * @since 2.0.0
 * @category errors
 */
export const PermitWaitTimeout: typeof BulkheadErrors.PermitWaitTimeout = BulkheadErrors.PermitWaitTimeout

/**
 * @since 2.0.0
 * @category errors
 */
export interface PermitWaitTimeout extends BulkheadErrors.PermitWaitTimeout {}

/**
 * @since 2.0.0
 * @category errors
 */
export type BulkheadError = BulkheadFull | PermitWaitTimeout

/**
 * @since 2.0.0
 * @category guards
 */
export const isBulkhead: (u: unknown) => u is Bulkhead<unknown> = internal.isBulkhead

/**
 * @since 2.0.0
 * @category guards
 */
export const isBulkheadError: (u: unknown) => u is BulkheadError = BulkheadErrors.isBulkheadError

/**
 * Creates a bulkhead. Invalid options (permits below 1, `maxPermits` below `permits`, a negative
 * or NaN `maxWait`, ...) are a defect with a message naming the bulkhead and the value.
 *
 * @example
 * ```ts
 * import { Bulkhead } from "@sluice/bulkhead"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   const bulkhead = yield* Bulkhead.make({ name: "geocoder", permits: 4, maxWaiting: 100, maxWait: "2 seconds" })
 *   // at most 4 of these run at once; the others queue in arrival order
 *   yield* Effect.forEach([1, 2, 3, 4, 5, 6], (n) => bulkhead.run(Effect.succeed(n * 2)), { concurrency: "unbounded" })
 * })
 * ```
 *
 * @since 2.0.0
 * @category constructors
 */
export const make: (options: Options) => Effect.Effect<Bulkhead> = internal.make

/**
 * Creates a bulkhead outside an effect (Effect 4's name for it). Its metrics go to the registry
 * of the fiber running when it is called, else to the default one.
 *
 * @since 2.0.0
 * @category constructors
 */
export const makeUnsafe: (options: Options) => Bulkhead = (options) => internal.makeUnsafe(options)

/**
 * Creates a bulkhead outside an effect: `makeUnsafe` under the 0.x line's name.
 *
 * @since 2.0.0
 * @category constructors
 */
export const unsafeMake: (options: Options) => Bulkhead = makeUnsafe

/**
 * Runs an effect under a bulkhead: `effect.pipe(Bulkhead.withBulkhead(bulkhead, { permits: 2 }))`.
 *
 * @since 2.0.0
 * @category combinators
 */
export const withBulkhead: {
  <EB = never>(
    bulkhead: Bulkhead<EB>,
    options?: RunOptions | undefined
  ): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | BulkheadError | EB, R>
  <A, E, R, EB = never>(
    self: Effect.Effect<A, E, R>,
    bulkhead: Bulkhead<EB>,
    options?: RunOptions | undefined
  ): Effect.Effect<A, E | BulkheadError | EB, R>
} = internal.withBulkhead

/**
 * The batch helpers, from `BulkheadBatch`.
 *
 * @since 2.0.0
 * @category combinators
 */
export { forEach, mapStream } from "./BulkheadBatch.js"

/**
 * @since 2.0.0
 * @category models
 */
export type { BatchOptions } from "./BulkheadBatch.js"

/**
 * A service key for one bulkhead (a `Context.Service` class), with its layers: one key per
 * protected resource, since one key holds one value. Each layer value builds its own bulkhead; under
 * Effect 4's layer memoization, the same value provided again inside its own provide is the same
 * bulkhead. `E` is the store error of the bulkhead it holds (`never`: a local one).
 *
 * @since 2.0.0
 * @category tags
 */
export interface TagClass<Self, Id extends string, E = never>
  extends Context.ServiceClass<Self, `@sluice/bulkhead/${Id}`, Bulkhead<E>>
{
  /** The bulkhead's name: the id given to `Tag`. */
  readonly id: Id
  /** Builds the bulkhead once for the runtime that provides it. */
  readonly layer: (settings: Settings) => Layer.Layer<Self>
  /** Reads the options from `Config`, e.g. `Config.nested(Bulkhead.config, "GEOCODER")`. */
  readonly layerConfig: (
    config: Config.Config<Settings>
  ) => Layer.Layer<Self, Config.ConfigError>
}

/**
 * Declares the service of one bulkhead, named by `id`. For a bulkhead whose store can fail (one on
 * Redis), give its error: `Bulkhead.Tag("nominatim")<Nominatim, BulkheadStoreError>()`.
 *
 * @example
 * ```ts
 * import { Bulkhead } from "@sluice/bulkhead"
 * import { Effect } from "effect"
 *
 * class Nominatim extends Bulkhead.Tag("nominatim")<Nominatim>() {}
 *
 * const lookup = (q: string) =>
 *   Effect.flatMap(Nominatim, (bulkhead) => bulkhead.run(Effect.succeed(q)))
 *
 * const main = lookup("Lyon").pipe(Effect.provide(Nominatim.layer({ permits: 4, maxWait: "2 seconds" })))
 * ```
 *
 * @since 2.0.0
 * @category tags
 */
export const Tag: <const Id extends string>(id: Id) => <Self, E = never>() => TagClass<Self, Id, E> = layers.Tag

/**
 * A layer that builds a bulkhead once and provides it under `tag`.
 *
 * @since 2.0.0
 * @category layers
 */
export const layer: <I, E = never>(tag: Context.Key<I, Bulkhead<E>>, options: Options) => Layer.Layer<I> = layers.layer

/**
 * A layer that reads the options from `Config` and provides the bulkhead under `tag`.
 *
 * @since 2.0.0
 * @category layers
 */
export const layerConfig: <I, E = never>(
  tag: Context.Key<I, Bulkhead<E>>,
  config: Config.Config<Options>
) => Layer.Layer<I, Config.ConfigError> = layers.layerConfig

/**
 * The options as `Config`, validated: `PERMITS` (required), `MAX_PERMITS`, `MAX_WAITING`,
 * `MAX_WAIT` (a duration ≥ 0 such as `2 seconds`), `ORDER` (`fifo` or `lifo`). Nest it per provider.
 *
 * A wholly absent section is missing data (so `Config.option` reads it as "no bulkhead"); a
 * section with some keys but not `PERMITS` is invalid data naming `PERMITS`, so a misspelt or
 * forgotten key never silently drops the bound. Bad values (a negative duration, `12abc`, an
 * integer beyond 2^53 - 1) are invalid data naming the key and the text.
 *
 * @since 2.0.0
 * @category config
 */
export const config: Config.Config<Settings> = internalConfig.config

/**
 * `sluice_permit_wait_seconds`: how long each call waited for a permit (0 when one was free),
 * with the attribute `name`. Its mean rising while call time stays flat means the bulkhead binds.
 *
 * @since 2.0.0
 * @category metrics
 */
export const permitWaitSeconds: Metric.Histogram<number> = metrics.permitWaitSeconds

/**
 * `sluice_bulkhead_in_flight`: permits held right now, with the attribute `name`.
 *
 * @since 2.0.0
 * @category metrics
 */
export const inFlight: Metric.Gauge<number> = metrics.inFlightGauge

/**
 * `sluice_bulkhead_waiting`: callers queued right now, with the attribute `name`.
 *
 * @since 2.0.0
 * @category metrics
 */
export const waiting: Metric.Gauge<number> = metrics.waitingGauge

/**
 * `sluice_bulkhead_permits`: the current number of permits (it changes with `resize`), with the attribute `name`.
 *
 * @since 2.0.0
 * @category metrics
 */
export const permits: Metric.Gauge<number> = metrics.permitsGauge

/**
 * `sluice_bulkhead_rejected_total`: calls refused, with the attribute `name` and `reason` (`full` or `timeout`).
 *
 * Metric exports are named after the exported metric without its `sluice_<component>_` prefix,
 * in camel case, so the counter's `_total` stays in the name.
 *
 * @since 2.0.0
 * @category metrics
 */
export const rejectedTotal: Metric.Counter<number> = metrics.rejectedTotal

/**
 * @deprecated Use `rejectedTotal` (the same counter), named by the metric-export rule.
 * @since 2.0.0
 * @category metrics
 */
export const rejected: Metric.Counter<number> = rejectedTotal
