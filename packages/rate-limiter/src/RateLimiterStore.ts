/**
 * Where a rate limiter's decisions are made and its state is kept.
 *
 * A store decides each take in one call, atomically: given the limits, the costs and the wait
 * budget, it either reserves on every limit and answers with the delay until the caller may start,
 * or reserves nothing and answers with how long to wait before retrying. Everything crossing the
 * boundary is plain data (numbers and strings, no closures), and every time is a relative duration
 * in milliseconds measured on the store's own clock, so no caller ever compares its clock with the
 * store's. That is what lets a Redis store run each decision as one Lua script on the server's
 * `TIME`, in one round trip.
 *
 * `layerMemory` keeps the state in the process and decides on Effect's `Clock` (so `TestClock`
 * drives it). The same contract suite (`test-utils/src/storeContract.ts`) runs against every store.
 *
 * @since 0.1.0
 */
import * as LimiterInput from "@sluice/core/LimiterInput"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as internal from "./internal/memoryStore.js"
import { show } from "./internal/settings.js"
import * as RateLimiterErrors from "./RateLimiterError.js"

/**
 * - `"gcra"`: the generic cell rate algorithm, a token bucket that refills one unit every
 *   `window / limit` and holds `burst` units.
 * - `"fixed-window"`: at most `limit` units per window, windows aligned to multiples of the window
 *   length since the Unix epoch (a day window runs from midnight to midnight UTC).
 * - `"sliding-window"`: at most `limit` units in any window of that length, from an exact log of
 *   start times.
 *
 * @since 0.1.0
 * @category models
 */
export type Algorithm = "gcra" | "fixed-window" | "sliding-window"

/**
 * One limit, as the store sees it: validated numbers only.
 *
 * @since 0.1.0
 * @category models
 */
export interface LimitSpec {
  readonly algorithm: Algorithm
  /** Units per window, an integer ≥ 1. */
  readonly limit: number
  /** The window in milliseconds, > 0 and finite. */
  readonly windowMillis: number
  /** GCRA: how many units may start at the same instant, from 1 to `limit`. Windows: `limit`. */
  readonly burst: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ReserveRequest {
  /** The limiter's key: all of its limits, its pause and its reservation ids live under it. */
  readonly key: string
  /** Every limit the start must satisfy; all are charged or none. The same order on every call. */
  readonly limits: ReadonlyArray<LimitSpec>
  /**
   * Units this start takes on every limit, an integer from 1 to the smallest capacity of
   * `limits`; with `costs`, the largest of them (so a store that reads only `cost` charges too
   * much on some limits, never too little).
   */
  readonly cost: number
  /**
   * Units this start takes on each limit, aligned with `limits` (absent: `cost` on every limit;
   * read it with `costsOf`): integers from 0 to the limit's capacity (`burst` for GCRA, `limit`
   * for the windows; the limiter refuses larger ones with `CostExceedsCapacity` before asking).
   * A limit charged 0 neither delays the start nor is charged: a request that costs no tokens
   * does not wait for tokens.
   *
   * @since 0.3.0
   */
  readonly costs?: ReadonlyArray<number> | undefined
  /** The longest acceptable delay in milliseconds; `Infinity` for no bound, `0` to never wait. */
  readonly maxWaitMillis: number
}

/**
 * The start is reserved on every limit; the caller may start `delayMillis` from now.
 *
 * @since 0.1.0
 * @category models
 */
export interface Reserved {
  readonly _tag: "Reserved"
  readonly delayMillis: number
  /** The reservation's id under its key, for `refund`. Ids are never reused. */
  readonly reservation: number
  /**
   * Milliseconds left of the key's pause when the store decided, 0 (or absent) when not paused.
   * The limiter holds its callers that already reserved for that long too: a cooldown that
   * another process learned reaches callers of this one that reserved before it.
   */
  readonly pausedMillis?: number | undefined
  /**
   * What the store needs to take this reservation back exactly, or to settle it (opaque: pass it
   * to `refund` and `settle` as it came). Absent, a refund gives back what it can without it, and
   * a settle charges debts but gives nothing back.
   */
  readonly restore?: ReadonlyArray<number> | undefined
  /**
   * The start is admitted without any quota (a Redis store failing open while Redis is away):
   * the limiter lets it start after `delayMillis` without pacing it, and leaves it out of the
   * pacer's count, so that no backlog outlives the outage.
   */
  readonly unlimited?: boolean | undefined
}

/**
 * The start would have to wait `delayMillis`, more than `maxWaitMillis`; nothing was reserved.
 *
 * @since 0.1.0
 * @category models
 */
export interface Refused {
  readonly _tag: "Refused"
  readonly delayMillis: number
  /** `delayMillis - maxWaitMillis`: retrying with the same budget after this long can succeed. */
  readonly retryAfterMillis: number
  /** The index in `limits` of the limit that set the start, or `-1` when the pause did. */
  readonly binding: number
}

/**
 * @since 0.1.0
 * @category models
 */
export type ReserveResult = Reserved | Refused

/**
 * @since 0.1.0
 * @category models
 */
export interface RefundRequest {
  readonly key: string
  /** The limits of the reservation, as given to `reserve`. */
  readonly limits: ReadonlyArray<LimitSpec>
  /** The cost of the reservation, as given to `reserve`. */
  readonly cost: number
  /**
   * The costs of the reservation, as given to `reserve` (absent: `cost` on every limit).
   *
   * @since 0.3.0
   */
  readonly costs?: ReadonlyArray<number> | undefined
  /** The id `reserve` returned. */
  readonly reservation: number
  /** The `restore` `reserve` returned with it. */
  readonly restore?: ReadonlyArray<number> | undefined
}

/**
 * The usage of a reservation that started, once known.
 *
 * @since 0.3.0
 * @category models
 */
export interface SettleRequest {
  readonly key: string
  /** The limits of the reservation, as given to `reserve`. */
  readonly limits: ReadonlyArray<LimitSpec>
  /** The id `reserve` returned. */
  readonly reservation: number
  /** The `restore` `reserve` returned with it: for GCRA and the windows, where it was charged. */
  readonly restore?: ReadonlyArray<number> | undefined
  /** What `reserve` charged each limit (its `costs`), aligned with `limits`. */
  readonly reserved: ReadonlyArray<number>
  /** The actual usage on each limit, aligned with `limits`: integers ≥ 0, not bounded by capacity. */
  readonly actual: ReadonlyArray<number>
}

/**
 * What an upstream said about one limit (from its response headers), in the store's terms.
 *
 * @since 0.3.0
 * @category models
 */
export interface Observation {
  /** The index in `limits` of the limit it describes. */
  readonly limit: number
  /** Units the upstream still allows now, an integer ≥ 0. */
  readonly remaining: number
  /**
   * Milliseconds until the upstream resets that quota, finite and ≥ 0 (0 when it did not say).
   * Read only with `remaining: 0`. The limiter bounds it by its `maxResetAfter`; a store holds
   * whatever it is given (the Redis store keeps a key at most some 3,000 years, the longest expiry
   * Redis' Lua can write).
   */
  readonly resetAfterMillis: number
}

/**
 * @since 0.3.0
 * @category models
 */
export interface TightenRequest {
  readonly key: string
  readonly limits: ReadonlyArray<LimitSpec>
  /** At most one per limit. */
  readonly observations: ReadonlyArray<Observation>
}

/**
 * The cost of a reserve or refund on each limit: `costs`, or `cost` on every limit.
 *
 * @since 0.3.0
 * @category utils
 */
export const costsOf: (
  request: {
    readonly limits: ReadonlyArray<LimitSpec>
    readonly cost: number
    readonly costs?: ReadonlyArray<number> | undefined
  }
) => ReadonlyArray<number> = LimiterInput.costsOf

/**
 * The observations of `request` a store can apply, and a sentence naming the key and those it
 * cannot (absent when none): one whose `limit` is not an index of `limits`, whose `remaining` is
 * not a number ≥ 0, or whose `resetAfterMillis` is not a finite number ≥ 0. The limiter never
 * sends those; a store ignores them with that warning rather than read them as 0 or fail.
 *
 * @since 0.3.0
 * @category utils
 */
export const usableObservations = (
  request: TightenRequest
): { readonly usable: ReadonlyArray<Observation>; readonly ignored: string | undefined } =>
  LimiterInput.usableObservations(request, show)

/**
 * The operations every store implements.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * Decides one start atomically: reserve `costsOf(request)[i]` on every limit `i` charged above 0, or
   * nothing. The start is the earliest instant, at or after the key's pause, at which every
   * charged limit allows its cost.
   */
  readonly reserve: (request: ReserveRequest) => Effect.Effect<ReserveResult, RateLimiterStoreError>
  /**
   * Gives a reservation back where that cannot create an extra start in any window: at once when
   * it is the latest under its key; otherwise it is remembered, and goes back with the latest
   * when every reservation after it has been refunded too (so a mass cancellation, in any order,
   * rolls the schedule back to the last reservation still live). Answers whether anything went
   * back now. A reservation made after a roll back seals the ones below it, whose later refunds
   * lose their slots; so do bounds on what is remembered, and a settle that charged a debt. A
   * repeated refund is a no-op.
   */
  readonly refund: (request: RefundRequest) => Effect.Effect<boolean, RateLimiterStoreError>
  /**
   * Corrects a started reservation to its actual usage, limit by limit, in one atomic step (the
   * limiter calls it at most once per reservation; a store need not detect a repeat). With
   * `T = windowMillis / limit` and `d = actual − reserved`:
   *
   * - `d > 0`, a debt, charged at once so that later starts pay it (the settling caller never
   *   waits): GCRA `tat = max(tat, now) + d·T`; fixed window: `d` more units after everything
   *   reserved (the current window if it has room, then the next); sliding window: `d` units
   *   logged at `max(now, latest logged start)`. A debt also seals the key's earlier
   *   reservations for `refund` (a window's roll back would otherwise erase it).
   * - `d < 0`, unused units, given back only where that cannot create an extra start in any
   *   window. GCRA: `tat = max(tat − |d|·T, latest + charged − chargedAfter)`, where `charged` is
   *   the running total of what the limit was ever charged, in milliseconds (costs, debts and
   *   pause shifts, each times `T`; never reduced), `chargedAfter` that total just after this
   *   reservation's own charge (kept in `restore`), and `latest` the latest instant the limit's
   *   schedule was decided from (starts, debts, pauses, `tighten`): a start decided after this
   *   reservation is never left with less than its own and later charges behind it, so the
   *   schedule is never looser than if the reservation had been charged its actual usage. (When
   *   the reservation is the latest, this is exactly `tat − |d|·T`.) Fixed window: back to the
   *   count only while the window the reservation started in is still the current one and
   *   nothing is reserved in a later window. Sliding window: `|d|` of the reservation's units
   *   leave the log, if they are still in it.
   * - `d = 0`: nothing.
   */
  readonly settle: (request: SettleRequest) => Effect.Effect<void, RateLimiterStoreError>
  /**
   * Applies what an upstream said, never loosening (each step only delays future starts), in
   * one atomic step. For an observation of limit `i` with `r = remaining`:
   *
   * - GCRA: at most `r` units may start now, `tat = max(tat, now + (burst − r)·T)` (and `latest`
   *   moves up to that `tat`).
   * - fixed window: at most `r` more units in the current window, `count = max(count, limit − r)`
   *   (counted from the current window's start).
   * - sliding window: at most `r` more units in the window ending now: as many units as that
   *   takes are logged at `max(now, latest logged start)`.
   * - `r = 0` and `resetAfterMillis > 0`: besides, no start charging that limit before
   *   `now + resetAfterMillis` (a pause of that limit alone; extends, never shortens).
   *
   * An observation `usableObservations` refuses is ignored, with a warning naming the key.
   */
  readonly tighten: (request: TightenRequest) => Effect.Effect<void, RateLimiterStoreError>
  /**
   * Pauses the key for `millis` from now (extends a pause, never shortens one). Reservations
   * already made are not cancelled (their callers are held until the pause ends, then paced), so
   * a GCRA limit with callers still waiting moves its schedule past the pause by the time the
   * pause was extended: later reservations queue after the held callers instead of starting
   * beside them when the pause ends.
   */
  readonly pause: (key: string, millis: number) => Effect.Effect<void, RateLimiterStoreError>
  /** Milliseconds left of the key's pause, 0 when not paused. */
  readonly readPause: (key: string) => Effect.Effect<number, RateLimiterStoreError>
}

/**
 * The store service.
 *
 * @since 0.1.0
 * @category tags
 */
export class RateLimiterStore extends Context.Tag("@sluice/rate-limiter/RateLimiterStore")<
  RateLimiterStore,
  Service
>() {}

/**
 * A store failed to decide (for example Redis is unreachable). The memory store never fails.
 *
 * @since 0.1.0
 * @category errors
 */
export const RateLimiterStoreError: typeof RateLimiterErrors.RateLimiterStoreError =
  RateLimiterErrors.RateLimiterStoreError

/**
 * @since 0.1.0
 * @category errors
 */
export interface RateLimiterStoreError extends RateLimiterErrors.RateLimiterStoreError {}

/**
 * An in-process store on Effect's `Clock`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory: Effect.Effect<Service> = internal.makeMemory

/**
 * The in-process store. Limiters sharing it share the state of equal keys.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<RateLimiterStore> = Layer.effect(RateLimiterStore, internal.makeMemory)
