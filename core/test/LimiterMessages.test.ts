/**
 * The limiter's sentences from their fields: the parity table both lines print, and the short
 * figures their times are written in.
 */
import { assert, describe, it } from "vitest"
import * as LimiterInput from "../src/LimiterInput.js"
import * as LimiterMessages from "../src/LimiterMessages.js"
import { capacityRows, exceededRows } from "../testing/limiterMessages.js"

describe("LimiterMessages", () => {
  it("prints every row of the parity table", () => {
    assert.deepStrictEqual(
      exceededRows.map((row) => LimiterMessages.exceeded(row.fields)),
      exceededRows.map((row) => row.message)
    )
    assert.deepStrictEqual(
      capacityRows.map((row) => LimiterMessages.costExceedsCapacity(row.fields)),
      capacityRows.map((row) => row.message)
    )
  })

  it("writes a whole unit as one, else seconds or milliseconds to three places", () => {
    const cases: ReadonlyArray<readonly [number, string]> = [
      [0, "0ms"],
      [0.0004, "0ms"],
      [340, "340ms"],
      [1_000, "1s"],
      [3_400, "3.4s"],
      [60_000, "1min"],
      [90_000, "90s"],
      [7_200_000, "2h"],
      [86_400_000, "1d"],
      [Infinity, "forever"]
    ]
    assert.deepStrictEqual(cases.map(([millis]) => LimiterMessages.shortMillis(millis)), cases.map(([, text]) => text))
  })

  it("names the owner in the refusals of a limiter's options", () => {
    assert.strictEqual(
      LimiterMessages.bothShapes(`rate limiter "geo"`),
      `rate limiter "geo": give either limit and window or limits, not both`
    )
    assert.strictEqual(
      LimiterMessages.noLimits(`rate limiter "geo"`),
      `rate limiter "geo": limits must hold at least one limit`
    )
  })
})

describe("LimiterInput", () => {
  it("fills a limit's defaults: gcra, burst 1; a window admits its whole limit", () => {
    assert.deepStrictEqual(LimiterInput.limitDefaults({ limit: 5 }), {
      dimension: "default",
      algorithm: "gcra",
      burst: 1
    })
    assert.deepStrictEqual(
      LimiterInput.limitDefaults({ limit: 5, algorithm: "fixed-window", dimension: "tokens" }),
      { dimension: "tokens", algorithm: "fixed-window", burst: 5 }
    )
  })

  it("keeps the observations a store can apply and names the rest", () => {
    const limits = [{ algorithm: "gcra" as const, limit: 10, windowMillis: 1_000, burst: 1 }]
    const good = { limit: 0, remaining: 3, resetAfterMillis: 0 }
    const bad = { limit: 1, remaining: 3, resetAfterMillis: 0 }
    const { ignored, usable } = LimiterInput.usableObservations({ key: "k", limits, observations: [good, bad] })
    assert.deepStrictEqual(usable, [good])
    assert.strictEqual(
      ignored,
      `tighten of "k" ignored {"limit":1,"remaining":3,"resetAfterMillis":0}: an observation needs limit (an index of the limits), remaining (a number ≥ 0) and resetAfterMillis (a finite number ≥ 0)`
    )
    assert.deepStrictEqual(LimiterInput.costsOf({ limits: [...limits, ...limits], cost: 2 }), [2, 2])
  })
})
