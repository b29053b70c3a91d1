/**
 * The pure arithmetic where the limiter's tests cannot reach it: a fixed window whose absolute
 * unit count a double cannot hold exactly.
 */
import { describe, expect, it } from "vitest"
import * as algorithm from "../src/Algorithm.js"

describe("algorithm", () => {
  it("a fixed window too fine for an exact restore point gives back the cost only", () => {
    // 1 ms windows of 10,000 units: base × limit is beyond 2^53 at today's epoch
    const spec: algorithm.LimitSpec = { algorithm: "fixed-window", limit: 10_000, windowMillis: 1, burst: 10_000 }
    const state = algorithm.initialState(spec)
    const now = 1_700_000_000_000
    algorithm.commit(spec, state, now, now, 9_000)
    const point = algorithm.restorePoint(spec, state, now)
    expect(point).toBeNaN()
    // 2,000 do not fit in the 1,000 left: the next window, skipping 1,000
    const start = algorithm.earliest(spec, state, now, 2_000)
    algorithm.commit(spec, state, now, start, 2_000)
    algorithm.rollback(spec, state, now, 2_000, point)
    // conservative: the skipped 1,000 stay used in this window; the next one is whole again
    expect(algorithm.earliest(spec, state, now, 1)).toBe(now + 1)
    expect(algorithm.earliest(spec, state, now + 1, 10_000)).toBe(now + 1)
  })

  it("an exact restore point gives the skipped space back", () => {
    const spec: algorithm.LimitSpec = { algorithm: "fixed-window", limit: 10, windowMillis: 1000, burst: 10 }
    const state = algorithm.initialState(spec)
    algorithm.commit(spec, state, 0, 0, 1)
    const point = algorithm.restorePoint(spec, state, 0)
    algorithm.commit(spec, state, 0, algorithm.earliest(spec, state, 0, 10), 10)
    algorithm.rollback(spec, state, 0, 10, point)
    expect(algorithm.earliest(spec, state, 0, 9)).toBe(0)
  })
})
