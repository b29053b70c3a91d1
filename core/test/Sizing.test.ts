/**
 * Little's law on plain numbers: the fewest permits that carry the rate with the headroom, and
 * the first bad input named, in the order rate, latency, headroom.
 */
import * as fc from "fast-check"
import { assert, describe, it } from "vitest"
import { permits } from "../src/Sizing.js"

describe("Sizing", () => {
  it("gives the fewest permits that hold rate × latency × headroom, and says so in its derivation", () =>
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 60_000 }),
        fc.integer({ min: 10, max: 40 }),
        (rate, latencyMillis, tenths) => {
          const headroom = tenths / 10
          const outcome = permits({ rate, medianLatency: latencyMillis, medianLatencyMillis: latencyMillis, headroom })
          assert.strictEqual(outcome._tag, "Sized")
          if (outcome._tag !== "Sized") return
          const { derivation, permits: n, required } = outcome.sizing
          // integers and tenths: exact in decimal, so the bounds hold to the unit
          const inFlight = rate * latencyMillis
          assert.isTrue(required * 1000 >= inFlight && (required - 1) * 1000 < inFlight, `required ${required}`)
          assert.isTrue(n * 10 >= required * tenths && (n - 1) * 10 < required * tenths, `permits ${n}`)
          assert.match(derivation, new RegExp(`^rate ${rate}/s × median .+, ×${headroom} headroom = ${n}$`))
          assert.strictEqual(derivation.includes("rounded up"), required * 1000 !== inFlight)
        }
      ),
      { numRuns: 300 }
    ))

  it("refuses the first bad input, with the value as given", () => {
    assert.deepStrictEqual(permits({ rate: 0, medianLatency: "soon", medianLatencyMillis: Number.NaN, headroom: 0 }), {
      _tag: "Invalid",
      field: "rate",
      value: 0,
      message: "Sizing.permits: rate must be a finite number of calls per second > 0, got 0"
    })
    assert.deepStrictEqual(permits({ rate: 5, medianLatency: "soon", medianLatencyMillis: Number.NaN, headroom: 0 }), {
      _tag: "Invalid",
      field: "medianLatency",
      value: "soon",
      message: "Sizing.permits: medianLatency must be a finite duration > 0, got soon"
    })
    assert.deepStrictEqual(permits({ rate: 5, medianLatency: 200, medianLatencyMillis: 200, headroom: 0.5 }), {
      _tag: "Invalid",
      field: "headroom",
      value: 0.5,
      message: "Sizing.permits: headroom must be a finite number ≥ 1, got 0.5"
    })
    assert.deepStrictEqual(permits({ rate: 5, medianLatency: 200, medianLatencyMillis: 200 }), {
      _tag: "Sized",
      sizing: { permits: 2, required: 1, derivation: "rate 5/s × median 200 ms = 1, ×2 headroom = 2" }
    })
  })
})
