/**
 * The retry budget's window on plain numbers: its counts against a plain log of every attempt,
 * and the retries it allows.
 */
import * as fc from "fast-check"
import { assert, describe, it } from "vitest"
import { RetryBudgetState } from "../src/RetryBudgetState.js"

describe("RetryBudgetState", () => {
  it("counts the attempts of the current slice and the nine before it, as a plain log says", () =>
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5_000 }),
        fc.array(fc.record({ advance: fc.integer({ min: 0, max: 1_500 }), retry: fc.boolean() }), { maxLength: 120 }),
        (windowMillis, steps) => {
          const budget = new RetryBudgetState({ ratio: 0.25, minRetries: 2, windowMillis })
          const sliceMillis = windowMillis / 10
          const log: Array<{ readonly slice: number; readonly retry: boolean }> = []
          let now = 0
          for (const step of steps) {
            now += step.advance
            if (step.retry) budget.recordRetry(now)
            else budget.recordFirst(now)
            const current = Math.floor(now / sliceMillis)
            log.push({ slice: current, retry: step.retry })
            const inWindow = log.filter((entry) => entry.slice > current - 10)
            const firsts = inWindow.filter((entry) => !entry.retry).length
            const retries = inWindow.length - firsts
            assert.deepStrictEqual(budget.check(now), {
              firsts,
              retries,
              allowed: Math.max(2, Math.floor(0.25 * firsts))
            })
          }
        }
      ),
      { numRuns: 300 }
    ))

  it("allows max(minRetries, ratio × first attempts) retries, and forgets them a window later", () => {
    const budget = new RetryBudgetState({ ratio: 0.1, minRetries: 3, windowMillis: 10_000 })
    for (let i = 0; i < 50; i++) budget.recordFirst(i * 10)
    for (let i = 0; i < 4; i++) {
      assert.isUndefined(budget.exhausted(1_000))
      budget.recordRetry(1_000)
    }
    assert.isUndefined(budget.exhausted(1_000))
    budget.recordRetry(1_000)
    assert.deepStrictEqual(budget.exhausted(1_000), { firsts: 50, retries: 5, allowed: 5 })
    // the first attempts (slice 0) leave the window before the retries (slice 1): minRetries binds
    assert.deepStrictEqual(budget.exhausted(10_000), { firsts: 0, retries: 5, allowed: 3 })
    assert.isUndefined(budget.exhausted(11_000))
    assert.deepStrictEqual(budget.check(11_000), { firsts: 0, retries: 0, allowed: 3 })
  })
})
