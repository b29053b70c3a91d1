/**
 * The verdict on milliseconds: the order in which it reads the evidence, the limit it names, and
 * the durations provider messages print.
 */
import * as fc from "fast-check"
import { assert, describe, it } from "vitest"
import { formatMillis, type PhaseTimes, verdict, type VerdictInput } from "../src/Verdict.js"

const phase = (meanMillis: number): PhaseTimes => ({ count: 20, meanMillis, p95Millis: meanMillis })

describe("Verdict", () => {
  it("reads a failing store first, then upstream pushback, then says too little below 20 attempts", () =>
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 200 }),
        fc.nat(),
        fc.nat(),
        fc.array(fc.integer({ min: 0, max: 5_000 }), { minLength: 3, maxLength: 3 }),
        (attempts, store, upstream, [permit, limiter, call]) => {
          const storeErrors = Math.min(attempts, store % 30)
          const upstreamErrors = Math.min(attempts - storeErrors, upstream % 30)
          const input: VerdictInput = {
            attempts,
            storeErrors,
            upstreamErrors,
            permitWait: phase(permit),
            limiterWait: phase(limiter),
            callTime: phase(call)
          }
          const { binding, reason } = verdict(input)
          if (attempts === 0) return assert.deepStrictEqual(verdict(input), { binding: "none", reason: "no calls yet" })
          if (storeErrors > 0 && storeErrors / attempts >= 0.05) return assert.strictEqual(binding, "store")
          if (upstreamErrors > 0 && upstreamErrors / attempts >= 0.05) return assert.strictEqual(binding, "upstream")
          if (attempts < 20) {
            assert.strictEqual(binding, "none")
            return assert.match(reason, /^too little data to judge: /)
          }
          assert.notInclude(["store", "upstream"], binding)
        }
      ),
      { numRuns: 500 }
    ))

  it("names the limit used nearest its rate, over the part of its window the rate was seen", () => {
    const base: VerdictInput = {
      attempts: 100,
      upstreamErrors: 0,
      permitWait: phase(5),
      limiterWait: phase(900),
      callTime: phase(100)
    }
    // a day's quota at a minute's rate, seen for a minute: 1,000 of 100,000, not saturated
    const found = verdict({
      ...base,
      dimensions: [
        {
          dimension: "tokens",
          limit: 100_000,
          windowMillis: 86_400_000,
          ratePerSecond: 1_000 / 60,
          spanMillis: 60_000
        },
        { dimension: "requests", limit: 50, windowMillis: 10_000, ratePerSecond: 4.9 }
      ]
    })
    assert.deepStrictEqual(found, {
      binding: "limiter",
      dimension: "requests/10 s",
      reason: "requests/10 s saturated: requests used at 98 % of 50 per 10 s lately (permits held 90 % asleep in " +
        "the limiter, mean 900 ms of 1 s): the healthy state for a batch; more quota or a second provider helps, " +
        "more permits do not"
    })
  })

  it("writes durations as messages always have: units down to the nanosecond, 0 and Infinity", () => {
    const cases: ReadonlyArray<readonly [number, string]> = [
      [2_000, "2s"],
      [1_500, "1s 500ms"],
      [90_000, "1m 30s"],
      [90_061_001, "1d 1h 1m 1s 1ms"],
      [1.5, "1ms 500000ns"],
      [0.0000004, "0"],
      [0, "0"],
      [-5, "0"],
      [Number.NaN, "0"],
      [Number.POSITIVE_INFINITY, "Infinity"]
    ]
    assert.deepStrictEqual(cases.map(([millis]) => formatMillis(millis)), cases.map(([, text]) => text))
  })
})
