/**
 * The usage rules on plain numbers: what a cost resolves to per limit, and which limit an
 * upstream's observation tightens.
 */
import * as fc from "fast-check"
import { assert, describe, it } from "vitest"
import type { LimitSpec } from "../src/Algorithm.js"
import * as Usage from "../src/Usage.js"

const spec = (limit: number, windowMillis: number, burst = limit): LimitSpec => ({
  algorithm: "gcra",
  limit,
  windowMillis,
  burst
})

// requests: 100/min and 10/s; tokens: 1000/min (burst 500)
const shape: Usage.Shape = {
  name: "api",
  limits: [
    { dimension: "requests", limit: 100 },
    { dimension: "requests", limit: 10 },
    { dimension: "tokens", limit: 1000 }
  ],
  specs: [spec(100, 60_000), spec(10, 1_000), spec(1000, 60_000, 500)],
  dimensions: ["requests", "tokens"],
  maxResetAfterMillis: 60_000
}

const millis = (input: unknown): Usage.ResetAfter =>
  typeof input === "number" ? { _tag: "Millis", millis: input } : { _tag: "Invalid", message: "resetAfter is bad" }

describe("Usage.takeCosts", () => {
  it("charges a number on every limit and a record per dimension, an omitted dimension as 0", () => {
    assert.deepStrictEqual(Usage.takeCosts(shape, 3), { _tag: "Resolved", costs: [3, 3, 3] })
    assert.deepStrictEqual(Usage.takeCosts(shape, { tokens: 40 }), { _tag: "Resolved", costs: [0, 0, 40] })
  })

  it("names the first limit whose capacity a cost is above", () => {
    assert.deepStrictEqual(Usage.takeCosts(shape, { requests: 1, tokens: 501 }), {
      _tag: "ExceedsCapacity",
      index: 2,
      cost: 501,
      capacity: 500
    })
    assert.deepStrictEqual(Usage.takeCosts(shape, 11), { _tag: "ExceedsCapacity", index: 1, cost: 11, capacity: 10 })
  })

  it("refuses what is not units, with the value and the dimensions", () => {
    assert.deepStrictEqual(Usage.takeCosts(shape, 0), {
      _tag: "Invalid",
      message: "cost must be an integer ≥ 1, got 0"
    })
    assert.deepStrictEqual(Usage.takeCosts(shape, { images: 1 }), {
      _tag: "Invalid",
      message: "cost names the dimension \"images\", which no limit has (dimensions: \"requests\", \"tokens\")"
    })
    assert.deepStrictEqual(Usage.perLimit(shape, { tokens: Number.NaN }, "actual usage", undefined), {
      _tag: "Invalid",
      message: "actual usage on dimension \"tokens\" must be an integer ≥ 0, got NaN"
    })
  })

  it("a usage record keeps the reserved figure of a dimension it omits", () =>
    fc.assert(
      fc.property(fc.array(fc.nat(500), { minLength: 3, maxLength: 3 }), fc.nat(500), (reserved, tokens) => {
        const resolved = Usage.perLimit(shape, { tokens }, "actual usage", reserved)
        assert.deepStrictEqual(resolved, { _tag: "Resolved", costs: [reserved[0], reserved[1], tokens] })
      })
    ))
})

describe("Usage.observationsFor", () => {
  it("picks the nearest limit of the dimension, then the shortest window", () => {
    const { observations, warnings } = Usage.observationsFor(shape, [
      { dimension: "requests", limit: 12, remaining: 4 },
      { dimension: "requests", remaining: 7, resetAfter: 500 }
    ], millis)
    assert.deepStrictEqual(observations, [{ limit: 1, remaining: 4, resetAfterMillis: 500 }])
    assert.deepStrictEqual(warnings, [])
  })

  it("bounds a reset by maxResetAfter, and warns only when nothing remains", () => {
    const { observations, warnings } = Usage.observationsFor(shape, [
      { dimension: "tokens", remaining: 3, resetAfter: 90_000 },
      { dimension: "requests", limit: 100, remaining: 0, resetAfter: 90_000 }
    ], millis)
    assert.deepStrictEqual(observations, [
      { limit: 2, remaining: 3, resetAfterMillis: 60_000 },
      { limit: 0, remaining: 0, resetAfterMillis: 60_000 }
    ])
    assert.deepStrictEqual(warnings, [
      "resetAfter 90000 on dimension \"requests\" is beyond maxResetAfter (60000 ms): read as 60000 ms"
    ])
  })

  it("ignores what it cannot read, each with a warning naming it", () => {
    const { observations, warnings } = Usage.observationsFor(shape, [
      { dimension: "images", remaining: 1 },
      { dimension: "tokens", remaining: -1 },
      { dimension: "tokens", remaining: 2, resetAfter: "soon" },
      7
    ], millis)
    assert.deepStrictEqual(observations, [{ limit: 2, remaining: 2, resetAfterMillis: 0 }])
    assert.deepStrictEqual(warnings, [
      "an observation of the unknown dimension \"images\" was ignored",
      "remaining -1 on dimension \"tokens\" was ignored",
      "resetAfter is bad on dimension \"tokens\": the reset was ignored",
      "an observation must be a record, got 7: ignored"
    ])
    assert.strictEqual(Usage.warning("api", warnings[0]), `rate limiter "api": ${warnings[0]}`)
  })
})
