/**
 * The breaker's state machine on plain numbers: the ratio window against a plain list of the last
 * calls, and the one probe of a half-open circuit whatever the order calls end in.
 */
import * as fc from "fast-check"
import { assert, describe, it } from "vitest"
import { type BreakerSettings, BreakerState, type Judgement, type State } from "../src/BreakerState.js"

const settings = (overrides: Partial<BreakerSettings>): BreakerSettings => ({
  consecutiveFailures: undefined,
  ratio: undefined,
  window: 10,
  minimumCalls: 1,
  openForMillis: 1_000,
  ...overrides
})

const make = (overrides: Partial<BreakerSettings>) => {
  const changes: Array<State> = []
  const breaker = new BreakerState(settings(overrides), (state) => changes.push(state))
  return { breaker, changes }
}

describe("BreakerState", () => {
  it("opens on the failure that brings the last `window` outcomes to the ratio, as a plain list says", () =>
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 8 }),
        fc.double({ min: 0.05, max: 1, noNaN: true }),
        fc.array(fc.boolean(), { maxLength: 60 }),
        (window, minimumCalls, ratio, failures) => {
          const { breaker } = make({ ratio, window, minimumCalls })
          const seen: Array<boolean> = []
          for (const [i, failure] of failures.entries()) {
            const admission = breaker.admit(i)
            assert.deepStrictEqual(admission, { _tag: "Pass", probe: false })
            breaker.settle(false, failure ? "failure" : "success", i)
            seen.push(failure)
            const last = seen.slice(-window)
            const failed = last.filter(Boolean).length
            // a success never opens the circuit, even one that fills the window to minimumCalls
            const expected = failure && last.length >= minimumCalls && failed / last.length >= ratio
            assert.strictEqual(breaker.state, expected ? "open" : "closed", `after ${seen.length} calls`)
            if (expected) {
              assert.strictEqual(breaker.openingFailures, failed)
              return
            }
            const trailing = seen.length - 1 - seen.lastIndexOf(false)
            assert.deepStrictEqual(breaker.counts, { consecutive: trailing, calls: last.length, failures: failed })
          }
        }
      ),
      { numRuns: 300 }
    ))

  it("admits one probe at a time, whatever the order overlapping calls end in", () =>
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.record({ op: fc.constant("admit" as const), advance: fc.integer({ min: 0, max: 700 }) }),
            fc.record({
              op: fc.constant("end" as const),
              pick: fc.nat(),
              judgement: fc.constantFrom<Judgement>("success", "failure", "neutral")
            })
          ),
          { maxLength: 80 }
        ),
        (steps) => {
          const { breaker, changes } = make({ consecutiveFailures: 2, openForMillis: 1_000 })
          let now = 0
          const running: Array<boolean> = []
          for (const step of steps) {
            if (step.op === "admit") {
              now += step.advance
              const admission = breaker.admit(now)
              if (admission._tag === "Pass") running.push(admission.probe)
              else if (admission.state === "open") {
                assert.strictEqual(admission.openedForMillis + admission.retryAfterMillis, 1_000)
                assert.isAbove(admission.retryAfterMillis, 0)
              } else {
                assert.strictEqual(admission.retryAfterMillis, 0)
                assert.isTrue(breaker.probing)
              }
            } else if (running.length > 0) {
              const [probe] = running.splice(step.pick % running.length, 1)
              breaker.settle(probe, step.judgement, now)
            }
            assert.isAtMost(running.filter(Boolean).length, 1)
            assert.strictEqual(breaker.probing, running.includes(true))
          }
          // every change is a move to another state
          changes.forEach((state, i) => assert.notStrictEqual(state, i === 0 ? "closed" : changes[i - 1]))
        }
      ),
      { numRuns: 300 }
    ))

  it("frees the probe's slot when it proves nothing, reopens on its failure, closes on its success", () => {
    const { breaker, changes } = make({ consecutiveFailures: 2, openForMillis: 1_000 })
    breaker.settle(false, "failure", 0)
    breaker.settle(false, "failure", 10)
    assert.deepStrictEqual(breaker.admit(400), {
      _tag: "Refuse",
      state: "open",
      failures: 2,
      openedForMillis: 390,
      retryAfterMillis: 610
    })
    assert.deepStrictEqual(breaker.admit(1_010), { _tag: "Pass", probe: true })
    assert.deepStrictEqual(breaker.admit(1_020), {
      _tag: "Refuse",
      state: "half-open",
      failures: 2,
      openedForMillis: 1_010,
      retryAfterMillis: 0
    })
    breaker.settle(true, "neutral", 1_030)
    assert.deepStrictEqual(breaker.admit(1_040), { _tag: "Pass", probe: true })
    breaker.settle(true, "failure", 1_050)
    assert.strictEqual(breaker.state, "open")
    assert.deepStrictEqual(breaker.admit(2_049), {
      _tag: "Refuse",
      state: "open",
      failures: 2,
      openedForMillis: 999,
      retryAfterMillis: 1
    })
    assert.deepStrictEqual(breaker.admit(2_050), { _tag: "Pass", probe: true })
    breaker.settle(true, "success", 2_060)
    assert.strictEqual(breaker.state, "closed")
    assert.deepStrictEqual(breaker.counts, { consecutive: 0, calls: 0, failures: 0 })
    assert.deepStrictEqual(changes, ["open", "half-open", "open", "half-open", "closed"])
  })
})
