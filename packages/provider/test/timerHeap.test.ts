import { assert, describe, it } from "@effect/vitest"
import { type Timed, TimerHeap } from "../src/internal/timerHeap.js"
import { seeded } from "./chaos.js"

interface Entry extends Timed {
  readonly id: number
}

const entry = (id: number): Entry => ({ id, at: Infinity, seq: 0, index: -1 })

describe("TimerHeap", () => {
  it("pops the earliest instant first, equal instants in the order they were set", () => {
    const heap = new TimerHeap<Entry>()
    const [a, b, c, d] = [entry(1), entry(2), entry(3), entry(4)]
    heap.set(a, 30)
    heap.set(b, 10)
    heap.set(c, 30)
    heap.set(d, 20)
    assert.isUndefined(heap.popDue(9))
    const order: Array<number> = []
    for (let e = heap.popDue(30); e !== undefined; e = heap.popDue(30)) order.push(e.id)
    assert.deepStrictEqual(order, [2, 4, 1, 3])
    assert.strictEqual(heap.size, 0)
    assert.strictEqual(a.index, -1)
  })

  it("moving or removing an entry keeps the order of the rest; removing twice is a no-op", () => {
    const heap = new TimerHeap<Entry>()
    const entries = [1, 2, 3, 4, 5].map(entry)
    entries.forEach((e, i) => heap.set(e, (i + 1) * 10))
    heap.set(entries[4]!, 5) // moved to the front
    heap.remove(entries[1]!)
    heap.remove(entries[1]!)
    const order: Array<number> = []
    for (let e = heap.popDue(Infinity); e !== undefined; e = heap.popDue(Infinity)) order.push(e.id)
    assert.deepStrictEqual(order, [5, 1, 3, 4])
  })

  it("agrees with a sorted list over random sets, moves, removals and pops", () => {
    const next = seeded(42)
    const heap = new TimerHeap<Entry>()
    const entries = Array.from({ length: 64 }, (_, i) => entry(i))
    // the model: entries in the heap with the order in which they were set
    const model = new Map<Entry, { at: number; seq: number }>()
    let seq = 0
    for (let step = 0; step < 3_000; step++) {
      const e = entries[Math.floor(next() * entries.length)]!
      const roll = next()
      if (roll < 0.5) {
        const at = Math.floor(next() * 100)
        heap.set(e, at)
        model.set(e, { at, seq: seq++ })
      } else if (roll < 0.7) {
        heap.remove(e)
        model.delete(e)
      } else {
        const now = Math.floor(next() * 100)
        const due = [...model.entries()].filter(([, v]) => v.at <= now)
          .sort(([, x], [, y]) => x.at - y.at || x.seq - y.seq)[0]
        const popped = heap.popDue(now)
        assert.strictEqual(popped, due?.[0])
        if (popped !== undefined) model.delete(popped)
      }
      assert.strictEqual(heap.size, model.size)
      for (const [entry, v] of model) assert.strictEqual(entry.at, v.at)
    }
  })
})
