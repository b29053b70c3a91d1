/**
 * The limiter's local pacer and its queue of waiting callers, on plain instants: the pacer holds
 * starts to the limits and the pause, a release of the latest charge rolls it back exactly; the
 * queue keeps reserved starts in order, first come first served among equal ones, and names the
 * caller that became its head.
 */
import * as fc from "fast-check"
import { assert, describe, it } from "vitest"
import type { LimitSpec } from "../src/Algorithm.js"
import { Pacer } from "../src/Pacer.js"
import { type Entry, StartQueue } from "../src/StartQueue.js"

// 10 per second, one at a time: a start every 100 ms
const spaced: ReadonlyArray<LimitSpec> = [{ algorithm: "gcra", limit: 10, windowMillis: 1_000, burst: 1 }]

describe("Pacer", () => {
  it("holds a start that would break a limit until the limit allows it", () => {
    const pacer = new Pacer(spaced)
    assert.isTrue(pacer.mayStart(0, [1]))
    pacer.charge(0, [1], false)
    assert.isFalse(pacer.mayStart(50, [1]))
    assert.strictEqual(pacer.startAt(0, 50, [1], false), 100)
    assert.strictEqual(pacer.binding(50, [1]), 0)
    // a start admitted without a quota is not held by the limits
    assert.strictEqual(pacer.startAt(0, 50, [1], true), 50)
    assert.isTrue(pacer.mayStart(100, [1]))
  })

  it("holds every start until the pause ends, and a pause only ever extends", () => {
    const pacer = new Pacer(spaced)
    pacer.pauseFor(0, 1_000)
    pacer.pauseFor(500, 100)
    assert.isFalse(pacer.unpaused(999))
    assert.isTrue(pacer.pausedAt(1_000))
    assert.strictEqual(pacer.startAt(0, 0, [1], true), 1_000)
    assert.isTrue(pacer.mayStart(1_000, [1]))
  })

  it("releases roll back from the latest charge, each exactly", () =>
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000 }), (gap) => {
        const pacer = new Pacer(spaced)
        const first = pacer.charge(0, [1], true)
        const second = pacer.charge(100 + gap, [1], true)
        assert(first !== undefined && second !== undefined)
        pacer.settle(second, [1], [0], true, 100 + gap)
        // back to the schedule of the first start alone
        assert.strictEqual(pacer.startAt(0, 100 + gap, [1], false), 100 + gap)
        pacer.settle(first, [1], [0], true, 100 + gap)
        assert.isTrue(pacer.mayStart(100 + gap, [1]))
      })
    ))
})

interface Caller extends Entry<Caller> {
  readonly id: number
}

const caller = (id: number, target: number): Caller => ({ id, target, prev: undefined, next: undefined })

const order = (queue: StartQueue<Caller>): Array<number> => {
  const ids: Array<number> = []
  for (let at = queue.head; at !== undefined; at = at.next) ids.push(at.id)
  return ids
}

describe("StartQueue", () => {
  it("keeps callers in the order of their starts, first come first served among equal ones", () =>
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 40 }), (targets) => {
        const queue = new StartQueue<Caller>()
        targets.forEach((target, id) => queue.enqueue(caller(id, target)))
        const expected = targets.map((target, id) => ({ target, id }))
          .sort((a, b) => a.target - b.target || a.id - b.id)
          .map((c) => c.id)
        assert.deepStrictEqual(order(queue), expected)
      })
    ))

  it("names the caller that became the head when the head leaves, and none otherwise", () => {
    const queue = new StartQueue<Caller>()
    const [a, b, c] = [caller(0, 0), caller(1, 100), caller(2, 200)]
    for (const x of [a, b, c]) queue.enqueue(x)
    assert.strictEqual(queue.unlink(b), undefined)
    assert.deepStrictEqual(order(queue), [0, 2])
    assert.strictEqual(queue.unlink(a), c)
    assert.strictEqual(queue.unlink(c), undefined)
    assert.strictEqual(queue.head, undefined)
  })
})
