/**
 * Usage-based limits on the algorithms' state, on plain numbers like `Algorithm`: settling a
 * started reservation to its actual usage, and tightening a limit to what an upstream said. The
 * memory store runs these; the Redis store's scripts transcribe them. Imports nothing from Effect.
 *
 * @since 0.1.0
 */
import {
  commit,
  emissionInterval,
  type LimitSpec,
  type LimitState,
  normalizeFixed,
  slidingLength,
  type SlidingWindowState
} from "./Algorithm.js"

/** Drops `remove` units logged at `at` (the units of one reservation), where the log still has them. */
const dropUnits = (spec: LimitSpec, state: SlidingWindowState, now: number, at: number, remove: number): void => {
  let lo = state.head
  let hi = state.times.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (state.times[mid] < at) lo = mid + 1
    else hi = mid
  }
  let found = 0
  while (lo + found < state.times.length && state.times[lo + found] === at) found++
  let n = Math.min(remove, found)
  // Units below the log's start are gone: keep `limit` units then, the only ones ever read.
  if (state.trimmedAt > now - spec.windowMillis) n = Math.min(n, slidingLength(state) - spec.limit)
  if (n > 0) state.times.splice(lo, n)
}

/**
 * Corrects a started reservation of `reserved` units (made at `start`, with `point` its
 * `restorePoint`, when known) to its `actual` usage; the rules are `RateLimiterStore.settle`'s.
 * Answers whether a debt was charged.
 *
 * @since 0.1.0
 */
export const settle = (
  spec: LimitSpec,
  state: LimitState,
  now: number,
  start: number | undefined,
  reserved: number,
  actual: number,
  point: number | undefined
): boolean => {
  const d = actual - reserved
  if (d === 0) return false
  switch (state._tag) {
    case "gcra": {
      const interval = emissionInterval(spec)
      if (d > 0) {
        state.tat = Math.max(state.tat, now) + d * interval
        state.charged += d * interval
        state.latest = Math.max(state.latest, now)
        return true
      }
      if (point === undefined || !Number.isFinite(point)) return false
      // Every start decided after this reservation keeps its own and later charges behind it.
      const chargedAfter = point + reserved * interval
      const floor = state.latest + (state.charged - chargedAfter)
      state.tat = Math.min(state.tat, Math.max(state.tat + d * interval, floor))
      return false
    }
    case "fixed-window": {
      normalizeFixed(spec, state, now)
      if (d > 0) {
        state.count += d
        return true
      }
      if (
        start !== undefined && Math.floor(start / spec.windowMillis) === state.base &&
        state.count <= spec.limit
      ) {
        state.count = Math.max(0, state.count + d)
      }
      return false
    }
    case "sliding-window": {
      if (d > 0) {
        const last = slidingLength(state) > 0 ? state.times[state.times.length - 1] : now
        commit(spec, state, now, Math.max(now, last), d)
        return true
      }
      if (start !== undefined && start > now - spec.windowMillis) dropUnits(spec, state, now, start, -d)
      return false
    }
  }
}

/**
 * What an upstream said of this limit: `remaining` units left now, and, with `remaining: 0`, a
 * reset `resetAfter` milliseconds away; the rules are `RateLimiterStore.tighten`'s. Only ever
 * delays future starts.
 *
 * @since 0.1.0
 */
export const tighten = (
  spec: LimitSpec,
  state: LimitState,
  now: number,
  remaining: number,
  resetAfter: number
): void => {
  const r = Math.max(0, Math.min(remaining, spec.limit))
  if (r === 0 && resetAfter > 0) state.blockedUntil = Math.max(state.blockedUntil, now + resetAfter)
  switch (state._tag) {
    case "gcra": {
      const target = now + (spec.burst - Math.min(r, spec.burst)) * emissionInterval(spec)
      if (target > state.tat) state.tat = target
      state.latest = Math.max(state.latest, target)
      return
    }
    case "fixed-window": {
      normalizeFixed(spec, state, now)
      state.count = Math.max(state.count, spec.limit - r)
      return
    }
    case "sliding-window": {
      const horizon = now - spec.windowMillis
      let inWindow = 0
      for (let i = state.times.length - 1; i >= state.head && state.times[i] > horizon; i--) {
        if (state.times[i] <= now) inWindow++
      }
      const missing = spec.limit - r - inWindow
      if (missing > 0) {
        const last = slidingLength(state) > 0 ? state.times[state.times.length - 1] : now
        commit(spec, state, now, Math.max(now, last), missing)
      }
      return
    }
  }
}

/**
 * Settles every limit; `points[i]` is limit `i`'s `restorePoint`. Answers whether any limit was
 * charged a debt.
 *
 * @since 0.1.0
 */
export const settleAll = (
  specs: ReadonlyArray<LimitSpec>,
  states: ReadonlyArray<LimitState>,
  now: number,
  start: number | undefined,
  reserved: ReadonlyArray<number>,
  actual: ReadonlyArray<number>,
  points: ReadonlyArray<number> | undefined
): boolean => {
  let debt = false
  for (let i = 0; i < specs.length; i++) {
    if (settle(specs[i], states[i], now, start, reserved[i], actual[i], points?.[i])) debt = true
  }
  return debt
}
