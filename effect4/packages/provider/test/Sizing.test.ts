import { assert, describe, it } from "@effect/vitest"
import { Sizing } from "@sluice/provider"
import { Effect, Result } from "effect"

describe("Sizing.permits", () => {
  it("derives permits from rate × median latency with headroom, with the derivation as text", () => {
    const sized = Sizing.permits({ rate: 50, medianLatency: "200 millis" })
    assert.deepStrictEqual(
      sized,
      Result.succeed({ permits: 20, required: 10, derivation: "rate 50/s × median 200 ms = 10, ×2 headroom = 20" })
    )
  })

  it("rounds a fractional requirement up, and reads seconds", () => {
    const sized = Sizing.permits({ rate: 3, medianLatency: "1.5 seconds", headroom: 1.5 })
    assert.deepStrictEqual(
      Result.map(sized, (s) => [s.permits, s.derivation]),
      Result.succeed([8, "rate 3/s × median 1.5 s = 4.5, rounded up to 5, ×1.5 headroom = 8"])
    )
    // the seeds' table: 5/s at 200 ms needs one
    assert.deepStrictEqual(
      Result.map(Sizing.permits({ rate: 5, medianLatency: 200, headroom: 1 }), (s) => s.permits),
      Result.succeed(1)
    )
  })

  it.effect("bad inputs are an InvalidSizing error naming the field and the value", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [Sizing.Options, string]> = [
        [{ rate: 0, medianLatency: 200 }, "rate"],
        [{ rate: Number.NaN, medianLatency: 200 }, "rate"],
        [{ rate: Infinity, medianLatency: 200 }, "rate"],
        [{ rate: 10, medianLatency: -1 }, "medianLatency"],
        [{ rate: 10, medianLatency: Infinity }, "medianLatency"],
        [{ rate: 10, medianLatency: 0 }, "medianLatency"],
        [{ rate: 10, medianLatency: 100, headroom: 0.5 }, "headroom"]
      ]
      for (const [options, field] of cases) {
        const error = yield* Effect.flip(Effect.fromResult(Sizing.permits(options)))
        assert.strictEqual(error._tag, "InvalidSizing")
        assert.strictEqual(error.field, field)
        assert.match(error.message, new RegExp(`^Sizing.permits: ${field} must be .*, got `))
      }
    }))
})
