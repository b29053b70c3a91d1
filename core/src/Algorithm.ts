/**
 * The arithmetic of the three algorithms, on plain numbers (milliseconds) and plain state objects,
 * so that the same rules run in the memory store (on reservations), in the limiter's local pacer
 * (on actual starts), and, transcribed, in the Redis store's Lua script.
 *
 * Every function takes `now` and never reads a clock. Times are milliseconds since the Unix epoch
 * (fractional), which is what makes fixed windows align to UTC (a day window starts at midnight).
 *
 * @since 0.1.0
 */

/**
 * One limit as the arithmetic reads it (the shape of `LimitSpec`, declared here
 * so that this module imports nothing).
 *
 * @since 0.1.0
 */
export interface LimitSpec {
  readonly algorithm: "gcra" | "fixed-window" | "sliding-window"
  readonly limit: number
  readonly windowMillis: number
  readonly burst: number
}

/**
 * Comparisons of times tolerate a microsecond: `TestClock` reports nanoseconds rounded down from
 * fractional milliseconds, and an emission interval such as 1000/3 ms is not exact in binary.
 *
 * @since 0.1.0
 */
export const EPSILON_MILLIS = 0.001

/** @since 0.1.0 */
export interface GcraState {
  readonly _tag: "gcra"
  /** Theoretical arrival time: when the bucket will be empty of everything charged so far. */
  tat: number
  /**
   * Everything ever charged, in milliseconds (units times the emission interval: costs, debts,
   * pause shifts), never reduced: with `latest`, the floor of a give back (see `settle`).
   */
  charged: number
  /** The latest instant the schedule was decided from: starts, debts, pauses, tightenings. */
  latest: number
  /** No start charging this limit before this instant (`tighten` with `remaining: 0`). */
  blockedUntil: number
}

/** @since 0.1.0 */
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
  /** No start charging this limit before this instant (`tighten` with `remaining: 0`). */
  blockedUntil: number
}

/** @since 0.1.0 */
export interface SlidingWindowState {
  readonly _tag: "sliding-window"
  /**
   * Start time of every unit (a cost of 3 is three entries), oldest first, from `head`. Units that
   * left the window are dropped; the rest stay, so that a roll back finds what lies below it.
   */
  times: Array<number>
  head: number
  /**
   * The latest start dropped while still inside a window (the log outgrew `logCapacity`): a roll
   * back must then leave `limit` units in the log, since what lay below them is gone.
   */
  trimmedAt: number
  /** No start charging this limit before this instant (`tighten` with `remaining: 0`). */
  blockedUntil: number
}

/** @since 0.1.0 */
export type LimitState = GcraState | FixedWindowState | SlidingWindowState

/** @since 0.1.0 */
export const initialState = (spec: LimitSpec): LimitState => {
  switch (spec.algorithm) {
    case "gcra":
      return {
        _tag: "gcra",
        tat: Number.NEGATIVE_INFINITY,
        charged: 0,
        latest: Number.NEGATIVE_INFINITY,
        blockedUntil: Number.NEGATIVE_INFINITY
      }
    case "fixed-window":
      return { _tag: "fixed-window", base: Number.NEGATIVE_INFINITY, count: 0, blockedUntil: Number.NEGATIVE_INFINITY }
    case "sliding-window":
      return {
        _tag: "sliding-window",
        times: [],
        head: 0,
        trimmedAt: Number.NEGATIVE_INFINITY,
        blockedUntil: Number.NEGATIVE_INFINITY
      }
  }
}

/**
 * The largest cost one start can ever have under `spec`: the bucket depth for GCRA, the whole
 * window for the window algorithms.
 *
 * @since 0.1.0
 */
export const capacity = (spec: LimitSpec): number => spec.algorithm === "gcra" ? spec.burst : spec.limit

/** @since 0.1.0 */
export const emissionInterval = (spec: LimitSpec): number => spec.windowMillis / spec.limit

/** @since 0.1.0 */
export const normalizeFixed = (spec: LimitSpec, state: FixedWindowState, now: number): void => {
  const window = Math.floor(now / spec.windowMillis)
  if (window > state.base) {
    // Every window that has begun since `base` took (at most) `limit` of the reserved units.
    const elapsed = window - state.base
    state.count = elapsed === Number.POSITIVE_INFINITY ? 0 : Math.max(0, state.count - elapsed * spec.limit)
    state.base = window
  }
}

/** @since 0.1.0 */
export const slidingLength = (state: SlidingWindowState): number => state.times.length - state.head

/** The first unit index at which `cost` units fit in one window, from `count` on. */
const fixedSlot = (limit: number, count: number, cost: number): number =>
  (count % limit) + cost > limit ? (Math.floor(count / limit) + 1) * limit : count

/**
 * The earliest start at or after `now` that `spec` allows for `cost` units, given what `state`
 * holds. Reads the state (and may drop what can no longer matter) without charging anything.
 *
 * @since 0.1.0
 */
export const earliest = (
  spec: LimitSpec,
  state: LimitState,
  now: number,
  cost: number
): number => {
  switch (state._tag) {
    case "gcra": {
      // Conforming at s needs max(tat, s) + cost·T − s ≤ burst·T.
      return Math.max(now, state.blockedUntil, state.tat + (cost - spec.burst) * emissionInterval(spec))
    }
    case "fixed-window": {
      normalizeFixed(spec, state, now)
      const slot = fixedSlot(spec.limit, state.count, cost)
      return Math.max(now, state.blockedUntil, (state.base + Math.floor(slot / spec.limit)) * spec.windowMillis)
    }
    case "sliding-window": {
      const length = slidingLength(state)
      if (length === 0) return Math.max(now, state.blockedUntil)
      const last = state.times[state.times.length - 1]
      // The (limit − cost + 1)-th most recent unit must have left the window (s − W, s].
      const k = spec.limit - cost + 1
      const bound = k <= length ? state.times[state.times.length - k] + spec.windowMillis : now
      // Never before the latest start: appending in order is what keeps every window checked.
      return Math.max(now, state.blockedUntil, last, bound)
    }
  }
}

/**
 * Charges `cost` units starting at `start` (≥ `earliest(spec, state, now, cost)`).
 *
 * @since 0.1.0
 */
export const commit = (
  spec: LimitSpec,
  state: LimitState,
  now: number,
  start: number,
  cost: number
): void => {
  switch (state._tag) {
    case "gcra": {
      const charge = cost * emissionInterval(spec)
      state.tat = Math.max(state.tat, start) + charge
      state.charged += charge
      state.latest = Math.max(state.latest, start)
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
      // A unit that left the window can never count again, whatever is rolled back above it.
      const horizon = now - spec.windowMillis
      while (state.head < state.times.length && state.times[state.head] <= horizon) state.head++
      // The log keeps its newest `logCapacity` units: room is made before logging, and of a charge
      // larger than that (a debt is unbounded) only the units kept are written.
      const kept = start > horizon ? Math.min(cost, logCapacity(spec)) : 0
      const excess = slidingLength(state) + kept - logCapacity(spec)
      if (excess > 0) {
        state.head += excess
        state.trimmedAt = state.times[state.head - 1]
      }
      if (kept < cost && start > horizon) state.trimmedAt = start
      if (state.head > 1024 && state.head * 2 > state.times.length) {
        state.times = state.times.slice(state.head)
        state.head = 0
      }
      for (let i = 0; i < kept; i++) state.times.push(start)
      return
    }
  }
}

/**
 * The most units a sliding-window log keeps inside the window: `limit` for the decisions, and
 * room for `MAX_ROLLBACK_UNITS` of reservations that may still be rolled back above them.
 *
 * @since 0.1.0
 */
export const logCapacity = (spec: LimitSpec): number => spec.limit + MAX_ROLLBACK_UNITS

/**
 * Units of a sliding window that a roll back can always restore exactly; a longer backlog keeps
 * its oldest part when rolled back (the quota holds, the slots are lost).
 *
 * @since 0.1.0
 */
export const MAX_ROLLBACK_UNITS = 4096

/**
 * What `rollback` and `settle` need of the state the instant before a reservation: a fixed
 * window's absolute unit count (`base × limit + count`), `NaN` where a double cannot hold it
 * exactly (tiny windows with huge limits: the roll back then gives back the cost only); GCRA's
 * `charged` (what a give back reads); a sliding window needs nothing (0).
 *
 * @since 0.1.0
 */
export const restorePoint = (spec: LimitSpec, state: LimitState, now: number): number => {
  if (state._tag === "gcra") return state.charged
  if (state._tag !== "fixed-window") return 0
  normalizeFixed(spec, state, now)
  const point = state.base * spec.limit + state.count
  return Number.isSafeInteger(point) ? point : Number.NaN
}

/**
 * Takes back reservations of `cost` units in all that lie at the top of the state (nothing was
 * decided on top of them), `point` being the `restorePoint` taken before the lowest of them, when
 * known. GCRA moves its schedule back by their cost (never below where a pause moved it); a fixed
 * window restores its count, space skipped included (without `point` it gives back the cost only);
 * a sliding window drops their units from the log. The state may stay more conservative than if
 * the reservations had never happened, never less.
 *
 * @since 0.1.0
 */
export const rollback = (
  spec: LimitSpec,
  state: LimitState,
  now: number,
  cost: number,
  point: number | undefined
): void => {
  switch (state._tag) {
    case "gcra": {
      state.tat -= cost * emissionInterval(spec)
      return
    }
    case "fixed-window": {
      normalizeFixed(spec, state, now)
      const restored = point === undefined || !Number.isFinite(point)
        ? state.count - cost
        : point - state.base * spec.limit
      state.count = Math.min(state.count, Math.max(0, restored))
      return
    }
    case "sliding-window": {
      let remove = Math.min(cost, slidingLength(state))
      // Units below the log's start are gone: keep `limit` units then, the only ones ever read.
      if (state.trimmedAt > now - spec.windowMillis) remove = Math.min(remove, slidingLength(state) - spec.limit)
      if (remove > 0) state.times.length -= remove
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
 * @since 0.1.0
 */
export const postpone = (
  spec: LimitSpec,
  state: LimitState,
  now: number,
  extension: number
): void => {
  if (state._tag === "gcra" && extension > 0 && state.tat - spec.burst * emissionInterval(spec) > now) {
    state.tat += extension
    state.charged += extension
    state.latest = Math.max(state.latest, now)
  }
}

/**
 * The earliest instant at or after `from` that every limit allows for its cost (a limit charged 0
 * is skipped), and which limit binds. Reads only.
 *
 * @since 0.1.0
 */
export const earliestAll = (
  specs: ReadonlyArray<LimitSpec>,
  states: ReadonlyArray<LimitState>,
  from: number,
  costs: ReadonlyArray<number>
): { readonly start: number; readonly binding: number } => {
  let start = from
  let binding = -1
  for (let i = 0; i < specs.length; i++) {
    if (costs[i] <= 0) continue
    const e = earliest(specs[i], states[i], from, costs[i])
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
 * @since 0.1.0
 */
export const earliestStartAll = (
  specs: ReadonlyArray<LimitSpec>,
  states: ReadonlyArray<LimitState>,
  from: number,
  costs: ReadonlyArray<number>
): number => {
  let start = from
  for (let i = 0; i < specs.length; i++) {
    if (costs[i] <= 0) continue
    const e = earliest(specs[i], states[i], from, costs[i])
    if (e > start) start = e
  }
  return start
}

/**
 * Charges every limit its cost at `start`.
 *
 * @since 0.1.0
 */
export const commitAll = (
  specs: ReadonlyArray<LimitSpec>,
  states: ReadonlyArray<LimitState>,
  now: number,
  start: number,
  costs: ReadonlyArray<number>
): void => {
  for (let i = 0; i < specs.length; i++) {
    if (costs[i] > 0) commit(specs[i], states[i], now, start, costs[i])
  }
}

/**
 * Rolls back every limit; `points[i]` is limit `i`'s `restorePoint`, when known.
 *
 * @since 0.1.0
 */
export const rollbackAll = (
  specs: ReadonlyArray<LimitSpec>,
  states: ReadonlyArray<LimitState>,
  now: number,
  costs: ReadonlyArray<number>,
  points: ReadonlyArray<number> | undefined
): void => {
  for (let i = 0; i < specs.length; i++) {
    if (costs[i] > 0) rollback(specs[i], states[i], now, costs[i], points?.[i])
  }
}
