/**
 * The memory store on plain instants: what a reserve answers, what a refund and a pause change,
 * each at the `now` it is given.
 */
import * as fc from "fast-check"
import { assert, describe, it } from "vitest"
import type { LimitSpec } from "../src/Algorithm.js"
import { MemoryStore } from "../src/MemoryStore.js"

// 2 per second, one at a time: a start every 500 ms
const perSecond: ReadonlyArray<LimitSpec> = [{ algorithm: "gcra", limit: 2, windowMillis: 1_000, burst: 1 }]
const take = (maxWaitMillis: number) => ({ key: "k", limits: perSecond, cost: 1, maxWaitMillis })

describe("MemoryStore", () => {
  it("queues starts on the emission interval and refuses one beyond the wait, by how much", () => {
    const store = new MemoryStore()
    const delays = [0, 1, 2].map(() => store.reserve(take(1_000), 0).delayMillis)
    assert.deepStrictEqual(delays, [0, 500, 1_000])
    assert.deepStrictEqual(store.reserve(take(1_000), 100), {
      _tag: "Refused",
      delayMillis: 1_400,
      retryAfterMillis: 400,
      binding: 0
    })
  })

  it("a refund of the latest reservation gives its slot back; of an older one, once the later goes", () => {
    const store = new MemoryStore()
    const reserved = [0, 1, 2].map(() => store.reserve(take(Infinity), 0))
    const refund = (i: number) => {
      const r = reserved[i]
      assert(r._tag === "Reserved")
      return store.refund({ ...take(0), reservation: r.reservation, restore: r.restore }, 0)
    }
    assert.isFalse(refund(1)) // below the top: remembered, nothing back yet
    assert.isTrue(refund(2)) // the top goes, and 1 with it
    assert.strictEqual(store.reserve(take(Infinity), 0).delayMillis, 500)
  })

  it("a pause holds every start until it ends and only ever extends", () =>
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60_000 }), fc.integer({ min: 0, max: 60_000 }), (pause, shorter) => {
        const store = new MemoryStore()
        store.reserve(take(0), 0)
        store.pause("k", pause, 0)
        store.pause("k", Math.min(shorter, pause), 0)
        assert.strictEqual(store.readPause("k", 0), pause)
        const r = store.reserve(take(Infinity), 0)
        assert(r._tag === "Reserved")
        assert.strictEqual(r.pausedMillis, pause)
        assert.isAtLeast(r.delayMillis, pause)
        assert.strictEqual(store.readPause("k", pause), 0)
      })
    ))

  it("a limit whose parameters changed starts afresh, an unchanged one keeps its state", () => {
    const store = new MemoryStore()
    store.reserve(take(0), 0)
    assert.strictEqual(store.reserve(take(Infinity), 0).delayMillis, 500)
    const wider: ReadonlyArray<LimitSpec> = [{ ...perSecond[0], burst: 2 }]
    assert.strictEqual(store.reserve({ ...take(0), limits: wider }, 0).delayMillis, 0)
  })
})
