/**
 * A sliding window's log holds at most `limit + MAX_ROLLBACK_UNITS` units, during a charge as
 * after it, whatever the charge: a settled debt is whatever the upstream reports. What a charge
 * larger than the log writes is only what the log keeps, decided exactly as if every unit had been
 * logged and the oldest trimmed (checked against that naive log over random charges).
 */
import * as FastCheck from "fast-check"
import { describe, expect, it } from "vitest"
import * as algorithm from "../src/Algorithm.js"
import * as settlement from "../src/Settlement.js"

const spec: algorithm.LimitSpec = { algorithm: "sliding-window", limit: 5, windowMillis: 1000, burst: 5 }

const slidingState = (): algorithm.SlidingWindowState => {
  const state = algorithm.initialState(spec)
  if (state._tag !== "sliding-window") throw new Error("expected a sliding window")
  return state
}

/** An array that records the most elements it ever held (its copies, made by `slice`, too). */
const peak = { length: 0 }
class Recording extends Array<number> {
  override push(...items: Array<number>): number {
    const length = super.push(...items)
    if (length > peak.length) peak.length = length
    return length
  }
}

describe("sliding window log", () => {
  it("settling 10^9 units writes at most the log's capacity, and the log never holds more", () => {
    const state = slidingState()
    state.times = new Recording()
    peak.length = 0
    const now = 1_700_000_000_000
    algorithm.commit(spec, state, now, now, 1)
    settlement.settle(spec, state, now, now, 1, 1_000_000_000, 0)
    const capacity = algorithm.logCapacity(spec)
    expect(algorithm.slidingLength(state)).toBe(capacity)
    // the log's unit leaves it before the debt's are written (its slot stays in the array, behind
    // the head, until a compaction)
    expect(peak.length).toBeLessThanOrEqual(capacity + 1)
    expect(state.trimmedAt).toBe(now)
    // the window is full until the debt's units leave it
    expect(algorithm.earliest(spec, state, now, 1)).toBe(now + 1000)
    // a further debt on a full log: still bounded, the array compacted behind the log
    settlement.settle(spec, state, now + 10, now + 10, 0, 1_000_000_000, 0)
    expect(algorithm.slidingLength(state)).toBe(capacity)
    expect(peak.length).toBeLessThanOrEqual(2 * capacity + 1024)
    expect(algorithm.earliest(spec, state, now + 10, 1)).toBe(now + 1010)
  })

  it("decides as the naive log does (every unit logged, the oldest trimmed), over random charges", () => {
    /** The log before bounded charges: one entry per unit, trimmed after logging. */
    const naiveCommit = (state: algorithm.SlidingWindowState, now: number, start: number, cost: number) => {
      for (let i = 0; i < cost; i++) state.times.push(start)
      const horizon = now - spec.windowMillis
      while (state.head < state.times.length && state.times[state.head] <= horizon) state.head++
      const excess = algorithm.slidingLength(state) - algorithm.logCapacity(spec)
      if (excess > 0) {
        state.head += excess
        state.trimmedAt = state.times[state.head - 1]
      }
    }
    const capacity = algorithm.logCapacity(spec)
    FastCheck.assert(
      FastCheck.property(
        FastCheck.array(
          FastCheck.record({
            gap: FastCheck.integer({ min: 0, max: 1500 }),
            cost: FastCheck.oneof(
              FastCheck.integer({ min: 1, max: 5 }),
              FastCheck.integer({ min: capacity - 10, max: capacity + 10 }),
              FastCheck.integer({ min: 1, max: 3 * capacity })
            ),
            rollback: FastCheck.integer({ min: 0, max: 6 })
          }),
          { minLength: 1, maxLength: 12 }
        ),
        (charges) => {
          const bounded = slidingState()
          const naive = slidingState()
          let now = 1_000_000
          for (const charge of charges) {
            now += charge.gap
            const start = Math.max(now, algorithm.earliest(spec, bounded, now, 1))
            algorithm.commit(spec, bounded, now, start, charge.cost)
            naiveCommit(naive, now, start, charge.cost)
            algorithm.rollback(spec, bounded, now, charge.rollback, undefined)
            algorithm.rollback(spec, naive, now, charge.rollback, undefined)
            expect(bounded.times.slice(bounded.head)).toEqual(naive.times.slice(naive.head))
            expect(bounded.trimmedAt).toBe(naive.trimmedAt)
            for (const cost of [1, 3, 5]) {
              expect(algorithm.earliest(spec, bounded, now, cost)).toBe(algorithm.earliest(spec, naive, now, cost))
            }
          }
        }
      ),
      { numRuns: 200 }
    )
  })
})
