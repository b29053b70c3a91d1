/**
 * The pure core on its own: plain synchronous calls, no fibers, no clock.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "vitest"
import type { Order } from "../src/PermitQueue.js"
import { PermitQueue, Ticket } from "../src/PermitQueue.js"

class Named extends Ticket {
  constructor(readonly id: string, cost: number) {
    super(cost)
  }
}

/** A queue that records every grant and every gauge change, as its owner would see them. */
const make = (permits: number, order: Order = "fifo") => {
  const granted: Array<string> = []
  const gauges = { inFlight: [] as Array<number>, waiting: [] as Array<number> }
  const queue = new PermitQueue<Named>(permits, order, {
    granted: (ticket) => granted.push(ticket.id),
    inFlight: (n) => gauges.inFlight.push(n),
    waiting: (n) => gauges.waiting.push(n)
  })
  const enqueue = (id: string, cost = 1) => queue.enqueue(new Named(id, cost))
  return { queue, granted, gauges, enqueue }
}

const counts = (queue: PermitQueue<Named>) => ({
  permits: queue.permits,
  inFlight: queue.inFlight,
  holders: queue.holders,
  waiting: queue.waiting,
  waitingPermits: queue.waitingPermits
})

describe("PermitQueue", () => {
  it("imports nothing but the core's own modules", () => {
    const source = fs.readFileSync(path.join(import.meta.dirname, "../src/PermitQueue.ts"), "utf8")
    const imports = source.match(/^\s*import\b.*$/gm) ?? []
    assert.deepStrictEqual(imports.filter((line) => !/ from "\.\/internal\/[a-z]+\.js"$/.test(line)), [])
  })

  it("takes free permits at once, and hands released ones to the oldest ticket", () => {
    const { enqueue, granted, queue } = make(2)
    assert.isTrue(queue.tryTake(1))
    assert.isTrue(queue.tryTake(1))
    assert.isFalse(queue.tryTake(1))
    const a = enqueue("a")
    const b = enqueue("b")
    assert.deepStrictEqual([a.aheadWhenQueued, b.aheadWhenQueued], [0, 1])
    assert.deepStrictEqual(counts(queue), { permits: 2, inFlight: 2, holders: 2, waiting: 2, waitingPermits: 2 })
    queue.release(1)
    assert.deepStrictEqual(granted, ["a"])
    assert.strictEqual(a.state, "granted")
    queue.hold(a)
    assert.strictEqual(a.state, "held")
    queue.release(1)
    assert.deepStrictEqual(granted, ["a", "b"])
    assert.deepStrictEqual(counts(queue), { permits: 2, inFlight: 2, holders: 2, waiting: 0, waitingPermits: 0 })
  })

  it("a newcomer never takes a permit while a ticket is queued, nor one released to a ticket", () => {
    const { enqueue, granted, queue } = make(2)
    assert.isTrue(queue.tryTake(1))
    enqueue("heavy", 2)
    // a permit is free, but a ticket is queued: the newcomer queues behind it
    assert.isFalse(queue.tryTake(1))
    queue.release(1)
    assert.deepStrictEqual(granted, ["heavy"])
    // the permits are the heavy ticket's in the step they came back, before its caller takes them
    assert.isFalse(queue.tryTake(1))
    assert.deepStrictEqual(counts(queue), { permits: 2, inFlight: 2, holders: 1, waiting: 0, waitingPermits: 0 })
  })

  it("a heavy ticket at the head is not overtaken by lighter ones behind it", () => {
    const { enqueue, granted, queue } = make(3)
    assert.isTrue(queue.tryTake(2))
    enqueue("heavy", 3)
    enqueue("light", 1)
    // one permit is free, but the head needs three: nobody behind it goes first
    queue.dispatch()
    assert.deepStrictEqual(granted, [])
    assert.isFalse(queue.tryTake(1))
    queue.release(2)
    assert.deepStrictEqual(granted, ["heavy"])
    queue.release(3)
    assert.deepStrictEqual(granted, ["heavy", "light"])
  })

  it("lifo grants the newest ticket first, and lets a newcomer take a free permit", () => {
    const { enqueue, granted, queue } = make(1, "lifo")
    assert.isTrue(queue.tryTake(1))
    enqueue("a")
    enqueue("b")
    enqueue("c")
    queue.release(1)
    queue.release(1)
    queue.release(1)
    assert.deepStrictEqual(granted, ["c", "b", "a"])
    queue.release(1)
    assert.isTrue(queue.tryTake(1))
  })

  it("abandoning a queued ticket lets the tickets behind it in; abandoning twice is harmless", () => {
    const { enqueue, granted, queue } = make(2)
    assert.isTrue(queue.tryTake(1))
    const heavy = enqueue("heavy", 2)
    enqueue("light", 1)
    queue.abandon(heavy)
    queue.abandon(heavy)
    assert.strictEqual(heavy.state, "gone")
    assert.deepStrictEqual(granted, ["light"])
    assert.deepStrictEqual(counts(queue), { permits: 2, inFlight: 2, holders: 2, waiting: 0, waitingPermits: 0 })
  })

  it("abandoning a granted ticket before its caller holds it gives the permits back once", () => {
    const { enqueue, granted, queue } = make(1)
    assert.isTrue(queue.tryTake(1))
    const a = enqueue("a")
    const b = enqueue("b")
    queue.release(1)
    assert.strictEqual(a.state, "granted")
    queue.abandon(a)
    queue.abandon(a)
    // a's permit went straight on to b
    assert.deepStrictEqual(granted, ["a", "b"])
    assert.strictEqual(b.state, "granted")
    queue.hold(b)
    queue.abandon(b) // held: its caller releases it, not the queue
    assert.deepStrictEqual(counts(queue), { permits: 1, inFlight: 1, holders: 1, waiting: 0, waitingPermits: 0 })
    queue.release(1)
    assert.deepStrictEqual(counts(queue), { permits: 1, inFlight: 0, holders: 0, waiting: 0, waitingPermits: 0 })
  })

  it("leave takes a queued ticket out without granting, so its caller is told first", () => {
    const { enqueue, granted, queue } = make(2)
    assert.isTrue(queue.tryTake(1))
    const heavy = enqueue("heavy", 2)
    enqueue("light", 1)
    assert.isTrue(queue.leave(heavy))
    assert.deepStrictEqual(granted, [])
    queue.dispatch()
    assert.deepStrictEqual(granted, ["light"])
    assert.isFalse(queue.leave(heavy))
  })

  it("growing grants at once; shrinking takes nothing back and grants again below the new size", () => {
    const { enqueue, granted, queue } = make(2)
    assert.isTrue(queue.tryTake(1))
    assert.isTrue(queue.tryTake(1))
    enqueue("a")
    enqueue("b")
    queue.resize(3)
    assert.deepStrictEqual(granted, ["a"])
    queue.resize(1)
    assert.deepStrictEqual(counts(queue), { permits: 1, inFlight: 3, holders: 3, waiting: 1, waitingPermits: 1 })
    queue.release(1)
    queue.release(1)
    assert.deepStrictEqual(granted, ["a"])
    queue.release(1)
    assert.deepStrictEqual(granted, ["a", "b"])
  })

  it("reports every change of the counters to its owner, once", () => {
    const { enqueue, gauges, queue } = make(1)
    assert.isTrue(queue.tryTake(1))
    enqueue("a")
    queue.release(1)
    assert.deepStrictEqual(gauges, { inFlight: [1, 0, 1], waiting: [1, 0] })
  })

  it("random sequences keep the books: grants in arrival order, counters equal to what is held and queued", () => {
    let seed = 42
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648
      return seed % n
    }
    for (let run = 0; run < 200; run++) {
      const maxPermits = 1 + random(4)
      const { granted, queue } = make(maxPermits)
      const queued: Array<Named> = []
      const held: Array<number> = []
      let arrivals = 0
      for (let step = 0; step < 60; step++) {
        const action = random(5)
        if (action === 0 || action === 1) {
          const cost = 1 + random(maxPermits)
          if (queue.tryTake(cost)) held.push(cost)
          else queued.push(queue.enqueue(new Named(String(arrivals), cost)))
          arrivals++
        } else if (action === 2 && held.length > 0) {
          queue.release(held.splice(random(held.length), 1)[0]!)
        } else if (action === 3 && queued.length > 0) {
          queue.abandon(queued.splice(random(queued.length), 1)[0]!)
        } else {
          queue.resize(1 + random(maxPermits))
        }
        // granted tickets are now held by their callers
        for (const ticket of queued.filter((t) => t.state === "granted")) {
          queue.hold(ticket)
          held.push(ticket.cost)
          queued.splice(queued.indexOf(ticket), 1)
        }
        const ids = granted.map(Number)
        assert.deepStrictEqual(ids, [...ids].sort((a, b) => a - b), "grants follow arrival order")
        assert.strictEqual(queue.inFlight, held.reduce((a, b) => a + b, 0))
        assert.strictEqual(queue.holders, held.length)
        assert.strictEqual(queue.waiting, queued.length)
        assert.strictEqual(queue.waitingPermits, queued.reduce((a, t) => a + t.cost, 0))
        // nothing is left waiting that would fit: the head does not fit, or nobody waits
        if (queued.length > 0) assert.isAbove(queue.inFlight + queued[0]!.cost, queue.permits)
      }
    }
  })
})
