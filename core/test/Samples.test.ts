/**
 * A ring that starts small and grows (per-lane permit waits, one per fair-share tenant) keeps the
 * same values, hence the same summary, as a ring made at its full size.
 */
import * as fc from "fast-check"
import { assert, describe, it } from "vitest"
import { Samples } from "../src/Samples.js"

describe("Samples", () => {
  it("grown from 8 values, summarises as a ring made whole, before and after it wraps", () =>
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 300 }),
        fc.array(fc.integer({ min: 0, max: 10_000 }), { maxLength: 700 }),
        (size, values) => {
          const grown = new Samples(size, 8)
          const whole = new Samples(size)
          for (const value of values) {
            grown.add(value)
            whole.add(value)
            assert.deepStrictEqual(grown.summary(), whole.summary())
          }
        }
      ),
      { numRuns: 200 }
    ))
})
