/**
 * The Redis limiter's arguments and replies: a clock reading and GCRA's increments cross as text
 * without losing a bit, a reply is read or refused as invalid, a share never scales a limit to 0.
 */
import * as fc from "fast-check"
import { assert, describe, it } from "vitest"
import * as LimiterCommands from "../src/LimiterCommands.js"

describe("LimiterCommands", () => {
  it("a clock reading in milliseconds round-trips through its argument exactly", () =>
    fc.assert(
      fc.property(fc.double({ min: 0, max: 4e12, noNaN: true }), (millis) => {
        assert.strictEqual(Number(LimiterCommands.nowArgument(millis)), millis)
      })
    ))

  it("reads each reply form, and anything else as invalid", () => {
    assert.deepStrictEqual(LimiterCommands.decodeReserve([7, "250"]), {
      _tag: "Reserved",
      delayMillis: 0,
      reservation: 7,
      restore: [Number.NaN, 0, 250]
    })
    assert.deepStrictEqual(LimiterCommands.decodeReserve(["R", "100", "8", "0", "5", "6", "7"]), {
      _tag: "Reserved",
      delayMillis: 100,
      reservation: 8,
      pausedMillis: 0,
      restore: [5, 6, 7]
    })
    assert.deepStrictEqual(LimiterCommands.decodeReserve(["X", "900", "400", "1"]), {
      _tag: "Refused",
      delayMillis: 900,
      retryAfterMillis: 400,
      binding: 1
    })
    for (const reply of ["OK", ["Q"], null, 3]) {
      assert.strictEqual(LimiterCommands.decodeReserve(reply), LimiterCommands.invalid)
    }
    assert.strictEqual(LimiterCommands.decodeRefund(2), LimiterCommands.invalid)
    assert.strictEqual(LimiterCommands.decodePause("soon"), LimiterCommands.invalid)
  })

  it("encodes limits once, with the GCRA fast path only for a single GCRA limit", () => {
    const gcra = { algorithm: "gcra", limit: 3, windowMillis: 1_000, burst: 2 } as const
    const window = { algorithm: "sliding-window", limit: 10, windowMillis: 60_000, burst: 10 } as const
    const single = LimiterCommands.encode([gcra])
    assert.deepStrictEqual(single.limitArgs, ["1", "g", "3", "1000", "2", "g:3:1000:2"])
    const increments = LimiterCommands.gcraIncrements(single.gcra!, 2)
    assert.deepStrictEqual([increments.slack, increments.advance], [String(0 * (1_000 / 3)), String(2 * (1_000 / 3))])
    assert.isUndefined(LimiterCommands.encode([gcra, window]).gcra)
    assert.deepStrictEqual(LimiterCommands.keysOf("p:", "k", 2), ["p:{k}:v2", "p:{k}:v2:log:1", "p:{k}:v2:log:2"])
  })

  it("a share of a quota keeps every limit at 1 or more, and a burst within its limit", () =>
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 10_000 }),
        fc.double({ min: 0.01, max: 1, noNaN: true }),
        (limit, burst, share) => {
          const spec = { algorithm: "gcra", limit, windowMillis: 1_000, burst: Math.min(burst, limit) } as const
          const [scaled] = LimiterCommands.scaleLimits([spec], share)
          assert.isAtLeast(scaled.limit, 1)
          assert.isAtLeast(scaled.burst, 1)
          assert.isAtMost(scaled.burst, scaled.limit)
          assert.isAtMost(scaled.limit, limit)
        }
      )
    ))
})
