/**
 * The arithmetic of the three algorithms, on plain numbers (milliseconds) and plain state objects,
 * so that the same rules run in the memory store (on reservations), in the limiter's local pacer
 * (on actual starts), and, transcribed, in the Redis store's Lua script.
 *
 * Every function takes `now` and never reads a clock. Times are milliseconds since the Unix epoch
 * (fractional), which is what makes fixed windows align to UTC (a day window starts at midnight).
 *
 * @internal
 */
import type * as RateLimiterStore from "../RateLimiterStore.js"

/**
 * Comparisons of times tolerate a microsecond: `TestClock` reports nanoseconds rounded down from
 * fractional milliseconds, and an emission interval such as 1000/3 ms is not exact in binary.
 *
 * @internal
 */
export const EPSILON_MILLIS = 0.001

/** @internal */
export interface GcraState {
  readonly _tag: "gcra"
  /** Theoretical arrival time: when the bucket will be empty of everything charged so far. */
  tat: number
}

/** @internal */
export interface FixedWindowState {
  readonly _tag: "fixed-window"
  /** Index of the window `count` is measured from (`floor(time / window)`). */
  base: number
  /**
   * Units reserved from window `base` onwards, filled window after window: unit `n` belongs to
   * window `base + floor(n / limit)`. A reservation that does not fit in the rest of a window
   * skips to the next, so slots can be skipped but never shared.
   */
  count: number
}

/** @internal */
export interface SlidingWindowState {
  readonly _tag: "sliding-window"
  /** Start time of every unit (a cost of 3 is three entries), oldest first, from `head`. */
  times: Array<number>
  head: number
}

/** @internal */
export type LimitState = GcraState | FixedWindowState | SlidingWindowState

/** @internal */
export const initialState = (spec: RateLimiterStore.LimitSpec): LimitState => {
  switch (spec.algorithm) {
    case "gcra":
      return { _tag: "gcra", tat: Number.NEGATIVE_INFINITY }
    case "fixed-window":
      return { _tag: "fixed-window", base: Number.NEGATIVE_INFINITY, count: 0 }
    case "sliding-window":
      return { _tag: "sliding-window", times: [], head: 0 }
  }
}

/**
 * The largest cost one start can ever have under `spec`: the bucket depth for GCRA, the whole
 * window for the window algorithms.
 *
 * @internal
 */
export const capacity = (spec: RateLimiterStore.LimitSpec): number =>
  spec.algorithm === "gcra" ? spec.burst : spec.limit

const emissionInterval = (spec: RateLimiterStore.LimitSpec): number => spec.windowMillis / spec.limit

const normalizeFixed = (spec: RateLimiterStore.LimitSpec, state: FixedWindowState, now: number): void => {
  const window = Math.floor(now / spec.windowMillis)
  if (window > state.base) {
    // Every window that has begun since `base` took (at most) `limit` of the reserved units.
    const elapsed = window - state.base
    state.count = elapsed === Number.POSITIVE_INFINITY ? 0 : Math.max(0, state.count - elapsed * spec.limit)
    state.base = window
  }
}

const slidingLength = (state: SlidingWindowState): number => state.times.length - state.head

/** The first unit index at which `cost` units fit in one window, from `count` on. */
const fixedSlot = (limit: number, count: number, cost: number): number =>
  (count % limit) + cost > limit ? (Math.floor(count / limit) + 1) * limit : count

/**
 * The earliest start at or after `now` that `spec` allows for `cost` units, given what `state`
 * holds. Reads the state (and may drop what can no longer matter) without charging anything.
 *
 * @internal
 */
export const earliest = (
  spec: RateLimiterStore.LimitSpec,
  state: LimitState,
  now: number,
  cost: number
): number => {
  switch (state._tag) {
    case "gcra": {
      // Conforming at s needs max(tat, s) + cost·T − s ≤ burst·T.
      return Math.max(now, state.tat + (cost - spec.burst) * emissionInterval(spec))
    }
    case "fixed-window": {
      normalizeFixed(spec, state, now)
      const slot = fixedSlot(spec.limit, state.count, cost)
      return Math.max(now, (state.base + Math.floor(slot / spec.limit)) * spec.windowMillis)
    }
    case "sliding-window": {
      const length = slidingLength(state)
      if (length === 0) return now
      const last = state.times[state.times.length - 1]
      // The (limit − cost + 1)-th most recent unit must have left the window (s − W, s].
      const k = spec.limit - cost + 1
      const bound = k <= length ? state.times[state.times.length - k] + spec.windowMillis : now
      // Never before the latest start: appending in order is what keeps every window checked.
      return Math.max(now, last, bound)
    }
  }
}

/**
 * Charges `cost` units starting at `start` (≥ `earliest(spec, state, now, cost)`).
 *
 * @internal
 */
export const commit = (
  spec: RateLimiterStore.LimitSpec,
  state: LimitState,
  now: number,
  start: number,
  cost: number
): void => {
  switch (state._tag) {
    case "gcra": {
      state.tat = Math.max(state.tat, start) + cost * emissionInterval(spec)
      return
    }
    case "fixed-window": {
      normalizeFixed(spec, state, now)
      const window = Math.floor(start / spec.windowMillis) - state.base
      const first = window * spec.limit
      // A start pushed to a later window by another limit (or a pause) opens that window.
      state.count = state.count < first ? first + cost : fixedSlot(spec.limit, state.count, cost) + cost
      return
    }
    case "sliding-window": {
      for (let i = 0; i < cost; i++) state.times.push(start)
      // Only the latest `limit` units are ever read; twice that leaves room for refunds.
      const excess = slidingLength(state) - 2 * spec.limit
      if (excess > 0) state.head += excess
      if (state.head > 1024 && state.head * 2 > state.times.length) {
        state.times = state.times.slice(state.head)
        state.head = 0
      }
      return
    }
  }
}

/**
 * Gives back the `cost` units of the latest reservation. Only sound when no later reservation was
 * decided on top of it (the store checks that); the state may stay more conservative than if the
 * reservation had never happened, never less.
 *
 * @internal
 */
export const refund = (
  spec: RateLimiterStore.LimitSpec,
  state: LimitState,
  now: number,
  cost: number
): void => {
  switch (state._tag) {
    case "gcra": {
      state.tat -= cost * emissionInterval(spec)
      return
    }
    case "fixed-window": {
      normalizeFixed(spec, state, now)
      state.count = Math.max(0, state.count - cost)
      return
    }
    case "sliding-window": {
      const remove = Math.min(cost, slidingLength(state))
      state.times.length -= remove
      return
    }
  }
}

/**
 * A pause that starts or grows by `extension` milliseconds at `now`. Reservations already made
 * stand, and their callers are held until the pause ends; a GCRA limit with such callers moves its
 * schedule past the pause by `extension`, so that new reservations queue after the held callers
 * instead of starting beside them when the pause ends. (A delayed GCRA reservation starts at
 * `tat − burst·T`, so callers are still waiting exactly when that is later than `now`; when none
 * is, the pause alone delays the next start.) Window limits keep their counts: a held caller
 * starts in a later window than it was counted in, which its own window never notices.
 *
 * @internal
 */
export const postpone = (
  spec: RateLimiterStore.LimitSpec,
  state: LimitState,
  now: number,
  extension: number
): void => {
  if (state._tag === "gcra" && extension > 0 && state.tat - spec.burst * emissionInterval(spec) > now) {
    state.tat += extension
  }
}

/**
 * The earliest instant at or after `from` that every limit allows, and which limit binds. Reads
 * only.
 *
 * @internal
 */
export const earliestAll = (
  specs: ReadonlyArray<RateLimiterStore.LimitSpec>,
  states: ReadonlyArray<LimitState>,
  from: number,
  cost: number
): { readonly start: number; readonly binding: number } => {
  let start = from
  let binding = -1
  for (let i = 0; i < specs.length; i++) {
    const e = earliest(specs[i], states[i], from, cost)
    if (e > start + EPSILON_MILLIS) {
      start = e
      binding = i
    }
  }
  return { start, binding }
}

/**
 * `earliestAll(...).start` without the allocation: the hot path of the local pacer.
 *
 * @internal
 */
export const earliestStartAll = (
  specs: ReadonlyArray<RateLimiterStore.LimitSpec>,
  states: ReadonlyArray<LimitState>,
  from: number,
  cost: number
): number => {
  let start = from
  for (let i = 0; i < specs.length; i++) {
    const e = earliest(specs[i], states[i], from, cost)
    if (e > start) start = e
  }
  return start
}

/**
 * Charges every limit at `start`.
 *
 * @internal
 */
export const commitAll = (
  specs: ReadonlyArray<RateLimiterStore.LimitSpec>,
  states: ReadonlyArray<LimitState>,
  now: number,
  start: number,
  cost: number
): void => {
  for (let i = 0; i < specs.length; i++) commit(specs[i], states[i], now, start, cost)
}

/**
 * Refunds every limit.
 *
 * @internal
 */
export const refundAll = (
  specs: ReadonlyArray<RateLimiterStore.LimitSpec>,
  states: ReadonlyArray<LimitState>,
  now: number,
  cost: number
): void => {
  for (let i = 0; i < specs.length; i++) refund(specs[i], states[i], now, cost)
}
