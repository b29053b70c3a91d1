/**
 * A take's request and the reading of a refusal: the cost a refusal names is what the start asked
 * of the limit that refused it, or of the whole key when its pause did.
 */
import * as fc from "fast-check"
import { assert, describe, it } from "vitest"
import type { LimitSpec } from "../src/Algorithm.js"
import { MemoryStore } from "../src/MemoryStore.js"
import * as Requests from "../src/Requests.js"

const limits: ReadonlyArray<LimitSpec> = [
  { algorithm: "gcra", limit: 10, windowMillis: 1_000, burst: 10 },
  { algorithm: "fixed-window", limit: 100, windowMillis: 60_000, burst: 100 }
]

describe("Requests", () => {
  it("a charged request's cost is its largest, so a store reading only cost never undercharges", () =>
    fc.assert(
      fc.property(fc.nat(10), fc.nat(100), (a, b) => {
        const request = Requests.charged(Requests.unitRequest("k", limits, 0), [a, b])
        assert.deepStrictEqual([request.cost, request.costs], [Math.max(a, b), [a, b]])
      })
    ))

  it("a refusal names the limit that held the start and what it asked of it", () => {
    const store = new MemoryStore()
    const request = Requests.charged(Requests.unitRequest("k", limits, 0), [1, 100])
    store.reserve(request, 0)
    const refused = store.reserve(request, 0)
    assert(refused._tag === "Refused")
    assert.deepStrictEqual(Requests.refusalOf(refused, request), {
      _tag: "Quota",
      index: 1,
      cost: 100,
      retryAfterMillis: 60_000,
      maxWaitMillis: 0
    })
  })

  it("a refusal by the key's pause names the request's cost and no limit", () => {
    const request = Requests.charged(Requests.unitRequest("k", limits, 200), [3, 7])
    assert.deepStrictEqual(
      Requests.refusalOf({ _tag: "Refused", delayMillis: 500, retryAfterMillis: 300, binding: -1 }, request),
      { _tag: "Paused", cost: 7, retryAfterMillis: 300, maxWaitMillis: 200 }
    )
  })
})
