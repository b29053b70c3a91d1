/**
 * The lanes' pure core (RFC 0004) on its own: plain synchronous calls, `now` passed in.
 */
import * as fc from "fast-check"
import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "vitest"
import type { Policy } from "../src/LaneQueue.js"
import { LaneQueue, LaneTicket } from "../src/LaneQueue.js"

class Named extends LaneTicket {
  constructor(readonly id: string, cost: number) {
    super(cost)
  }
}

const make = (permits: number, policy: Policy) => {
  const granted: Array<string> = []
  const queue = new LaneQueue<Named>(permits, policy, {
    granted: (ticket) => granted.push(ticket.id),
    inFlight: () => {},
    waiting: () => {}
  })
  /** A call: takes at once when it may, else queues; returns its ticket (granted or queued). */
  const arrive = (id: string, lane: string, now: number, cost = 1) => {
    const ticket = new Named(id, cost)
    if (queue.tryTake(cost, queue.laneOf(lane)!)) {
      ticket.state = "held"
      granted.push(id)
      return ticket
    }
    return queue.enqueue(ticket, queue.laneOf(lane)!, now)
  }
  return { queue, granted, arrive }
}

const priority = (...lanes: Array<[string, number]>): Policy => ({
  _tag: "priority",
  lanes: lanes.map(([name, yieldForMillis]) => ({ name, yieldForMillis }))
})

const fair = (weights: Record<string, number>, defaultWeight = 1): Policy => ({
  _tag: "fairShare",
  weights: new Map(Object.entries(weights)),
  defaultWeight
})

describe("LaneQueue", () => {
  it("imports nothing but the core's own modules", () => {
    const source = fs.readFileSync(path.join(import.meta.dirname, "../src/LaneQueue.ts"), "utf8")
    const imports = source.match(/^\s*import\b.*$/gm) ?? []
    assert.deepStrictEqual(imports.filter((line) => !/ from "\.\/internal\/[a-z]+\.js"$/.test(line)), [])
  })

  describe("priority", () => {
    it("serves the first lane before batch tickets queued earlier", () => {
      const { arrive, granted, queue } = make(1, priority(["interactive", 0], ["batch", 30_000]))
      arrive("held", "batch", 0)
      arrive("b1", "batch", 0)
      arrive("b2", "batch", 100)
      arrive("i1", "interactive", 200)
      queue.release(1)
      queue.release(1)
      queue.release(1)
      assert.deepStrictEqual(granted, ["held", "i1", "b1", "b2"])
    })

    it("a batch ticket that has waited its yield ranks with an interactive one arriving now", () => {
      const { arrive, granted, queue } = make(1, priority(["interactive", 0], ["batch", 30_000]))
      arrive("held", "batch", 0)
      arrive("b1", "batch", 0) // due at 30,000
      arrive("i1", "interactive", 29_999) // due earlier: first
      arrive("i2", "interactive", 30_000) // due at the same instant: the higher lane wins the tie
      arrive("i3", "interactive", 30_001) // due later than b1
      for (let i = 0; i < 4; i++) queue.release(1)
      assert.deepStrictEqual(granted, ["held", "i1", "i2", "b1", "i3"])
    })

    it("a heavy ticket chosen next stops every lighter one behind it, of any lane", () => {
      const { arrive, granted, queue } = make(3, priority(["interactive", 0], ["batch", 1_000]))
      arrive("h1", "batch", 0)
      arrive("h2", "batch", 0)
      arrive("heavy", "interactive", 0, 3)
      arrive("b1", "batch", 0)
      queue.release(1)
      // two permits free: the heavy ticket needs three, and the batch ticket behind it waits too
      assert.deepStrictEqual(granted, ["h1", "h2"])
      assert.strictEqual(queue.inFlight, 1)
      queue.release(1)
      assert.deepStrictEqual(granted, ["h1", "h2", "heavy"])
    })

    it("a newcomer that ranks ahead of a blocked head and fits is granted as it queues", () => {
      const { arrive, queue } = make(2, priority(["interactive", 0], ["batch", 10_000]))
      arrive("h1", "batch", 0)
      const heavy = arrive("heavy", "batch", 0, 2) // due at 10,000: blocked behind h1
      const light = arrive("i1", "interactive", 5) // due at 5, fits the one free permit
      assert.deepStrictEqual([heavy.state, light.state], ["queued", "granted"])
      assert.strictEqual(queue.inFlight, 2)
    })

    it("an undeclared lane is unknown", () => {
      const { queue } = make(1, priority(["interactive", 0]))
      assert.strictEqual(queue.laneOf("batch"), undefined)
    })
  })

  describe("fairShare", () => {
    /** Two lanes always backlogged: each release goes to the next grant by the policy. */
    const shares = (weights: Record<string, number>, lanes: Array<string>, grants: number) => {
      const { arrive, granted, queue } = make(4, fair(weights))
      let n = 0
      const refill = () => {
        for (const lane of lanes) {
          while (queue.laneOf(lane)!.waiting < 8) arrive(`${lane}-${n++}`, lane, 0)
        }
      }
      refill()
      const before = granted.length
      for (let i = 0; i < grants; i++) {
        queue.release(1)
        refill()
      }
      const counts = new Map<string, number>()
      for (const id of granted.slice(before)) {
        const lane = id.slice(0, id.indexOf("-"))
        counts.set(lane, (counts.get(lane) ?? 0) + 1)
      }
      return counts
    }

    it("weights 3:1 give shares within 5 % over 10,000 grants", () => {
      const counts = shares({ a: 3, b: 1 }, ["a", "b"], 10_000)
      const a = counts.get("a") ?? 0
      const b = counts.get("b") ?? 0
      assert.strictEqual(a + b, 10_000)
      assert.isTrue(Math.abs(a / (a + b) - 0.75) <= 0.05 * 0.75, `a ${a}, b ${b}`)
    })

    it("an idle lane's share goes to the others, and it earns no credit while idle", () => {
      const { arrive, granted, queue } = make(1, fair({ a: 1, b: 1 }))
      arrive("held", "a", 0)
      for (let i = 0; i < 5; i++) arrive(`a${i}`, "a", 0)
      // b idle: a takes every permit
      for (let i = 0; i < 3; i++) queue.release(1)
      assert.deepStrictEqual(granted, ["held", "a0", "a1", "a2"])
      // b arrives while the permit is held: nothing is chosen then, and a's turn has spent its
      // credit, so b0 goes first, then the two alternate; b's idle time bought it nothing
      arrive("b0", "b", 0)
      arrive("b1", "b", 0)
      for (let i = 0; i < 4; i++) queue.release(1)
      assert.deepStrictEqual(granted.slice(4), ["b0", "a3", "b1", "a4"])
    })

    it("a heavy head, once its credit covers it, is not overtaken by a lighter lane at the permits", () => {
      const { arrive, granted, queue } = make(2, fair({ a: 1, b: 1 }))
      arrive("h1", "a", 0)
      arrive("h2", "a", 0)
      // every permit held: nothing is chosen, a's credit stays 0
      const heavy = arrive("heavy", "a", 0, 2)
      assert.strictEqual(queue.laneOf("a")!.credit, 0)
      const b0 = arrive("b0", "b", 0)
      arrive("b1", "b", 0)
      // a permit free: a's credit 1 does not cover 2, the turn passes to b
      queue.release(1)
      assert.deepStrictEqual(granted, ["h1", "h2", "b0"])
      // b's credit is spent: a's turn again, credit 2 covers the heavy head, which is chosen; b1
      // would fit the one free permit, but it waits
      queue.release(1)
      assert.deepStrictEqual(granted, ["h1", "h2", "b0"])
      assert.strictEqual(queue.laneOf("a")!.credit, 2)
      queue.hold(b0)
      queue.release(1)
      assert.deepStrictEqual(granted, ["h1", "h2", "b0", "heavy"])
      queue.hold(heavy)
      queue.release(2)
      assert.deepStrictEqual(granted, ["h1", "h2", "b0", "heavy", "b1"])
    })

    it("a lane that becomes busy joins the round last", () => {
      const { arrive, granted, queue } = make(1, fair({}))
      arrive("held", "a", 0)
      arrive("a0", "a", 0)
      arrive("a1", "a", 0)
      arrive("b0", "b", 0)
      arrive("c0", "c", 0)
      arrive("b1", "b", 0)
      arrive("c1", "c", 0)
      for (let i = 0; i < 6; i++) queue.release(1)
      assert.deepStrictEqual(granted.slice(1), ["a0", "b0", "c0", "a1", "b1", "c1"])
    })

    it("makes a lane on first sight, at its weight or the default", () => {
      const { queue } = make(1, fair({ paying: 3 }, 0.5))
      assert.deepStrictEqual([queue.laneOf("paying")!.weight, queue.laneOf("free")!.weight], [3, 0.5])
    })
  })

  /**
   * The model recomputes every choice from the whole of what is queued: `priority` takes the
   * minimum by (due, lane rank, arrival) over every ticket; `fairShare` keeps its round as an
   * array of lane names and its credits in a map.
   */
  class Model {
    queued: Array<{ id: string; cost: number; lane: string; due: number; seq: number }> = []
    inFlight = 0
    granted: Array<string> = []
    /** Permits granted per lane: the shares. */
    share = new Map<string, number>()
    round: Array<string> = []
    turn = 0
    started = false
    credit = new Map<string, number>()
    seq = 0
    constructor(
      public permits: number,
      readonly policy: Policy,
      readonly rank: (lane: string) => number,
      readonly yieldFor: (lane: string) => number,
      readonly weight: (lane: string) => number
    ) {}
    arrive(id: string, cost: number, lane: string, now: number): "held" | "queued" {
      if (this.queued.length === 0 && this.inFlight + cost <= this.permits) {
        this.inFlight += cost
        this.granted.push(id)
        this.share.set(lane, (this.share.get(lane) ?? 0) + cost)
        return "held"
      }
      this.queued.push({ id, cost, lane, due: now + this.yieldFor(lane), seq: this.seq++ })
      if (this.policy._tag === "fairShare" && !this.round.includes(lane)) {
        // last in the round: just before the lane whose turn it is
        if (this.round.length === 0) {
          this.round = [lane]
          this.turn = 0
          this.started = false
        } else {
          this.round.splice(this.turn, 0, lane)
          this.turn++
        }
        this.credit.set(lane, 0)
      }
      this.dispatch()
      return "queued"
    }
    remove(id: string) {
      const t = this.queued.find((q) => q.id === id)!
      this.queued = this.queued.filter((q) => q !== t)
      if (this.policy._tag === "fairShare" && !this.queued.some((q) => q.lane === t.lane)) {
        const at = this.round.indexOf(t.lane)
        this.round.splice(at, 1)
        this.credit.set(t.lane, 0)
        if (at < this.turn) this.turn--
        else if (at === this.turn) this.started = false
        if (this.turn >= this.round.length) this.turn = 0
      }
    }
    next() {
      if (this.queued.length === 0) return undefined
      if (this.policy._tag === "priority") {
        return [...this.queued].sort((x, y) =>
          x.due - y.due || this.rank(x.lane) - this.rank(y.lane) || x.seq - y.seq
        )[0]
      }
      for (;;) {
        const lane = this.round[this.turn]
        if (!this.started) {
          this.credit.set(lane, this.credit.get(lane)! + this.weight(lane))
          this.started = true
        }
        const head = this.queued.filter((q) => q.lane === lane).sort((x, y) => x.seq - y.seq)[0]
        if (head.cost <= this.credit.get(lane)!) return head
        this.turn = (this.turn + 1) % this.round.length
        this.started = false
      }
    }
    dispatch() {
      for (;;) {
        // the policy chooses only while a permit is free
        if (this.inFlight >= this.permits) return
        const t = this.next()
        if (t === undefined || this.inFlight + t.cost > this.permits) return
        if (this.policy._tag === "fairShare") this.credit.set(t.lane, this.credit.get(t.lane)! - t.cost)
        this.remove(t.id)
        this.inFlight += t.cost
        this.granted.push(t.id)
        this.share.set(t.lane, (this.share.get(t.lane) ?? 0) + t.cost)
      }
    }
  }

  const LANES = ["a", "b", "c"]
  // arrivals weigh most, so that several lanes are often busy at once
  const step = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant("arrive" as const),
        lane: fc.integer({ min: 0, max: 2 }),
        cost: fc.integer({ min: 1, max: 3 }),
        advance: fc.integer({ min: 0, max: 2_000 })
      })
    },
    fc.record({ kind: fc.constant("release" as const), pick: fc.nat() }),
    fc.record({ kind: fc.constant("abandon" as const), pick: fc.nat() }),
    fc.record({ kind: fc.constant("resize" as const), permits: fc.integer({ min: 1, max: 5 }) })
  )

  const policies = fc.oneof(
    fc.tuple(fc.integer({ min: 0, max: 3_000 }), fc.integer({ min: 0, max: 6_000 })).map(([b, c]): Policy =>
      priority(["a", 0], ["b", b], ["c", c])
    ),
    fc.tuple(
      fc.integer({ min: 1, max: 4 }),
      fc.integer({ min: 1, max: 4 }),
      fc.double({ min: 0.25, max: 2, noNaN: true })
    )
      .map(([wa, wb, d]): Policy => fair({ a: wa, b: wb }, d))
  )

  it("decides as the model does over random arrivals, releases, abandons and resizes", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5 }), policies, fc.array(step, { maxLength: 120 }), (k, policy, steps) => {
        const { arrive, granted, queue } = make(k, policy)
        const rank = (lane: string) => LANES.indexOf(lane)
        const model = new Model(
          k,
          policy,
          rank,
          (lane) => policy._tag === "priority" ? policy.lanes[rank(lane)].yieldForMillis : 0,
          (lane) => queue.laneOf(lane)!.weight
        )
        // holders by id with their cost; queued tickets by id
        const holders: Array<Named> = []
        const tickets: Array<Named> = []
        let now = 0
        let n = 0
        const collect = () => {
          for (const t of tickets) if (t.state === "granted") queue.hold(t)
          for (const t of tickets) if (t.state === "held" && !holders.includes(t)) holders.push(t)
        }
        for (const s of steps) {
          if (s.kind === "arrive") {
            now += s.advance
            const id = `t${n++}`
            const ticket = arrive(id, LANES[s.lane], now, s.cost)
            const expected = model.arrive(id, s.cost, LANES[s.lane], now)
            if (ticket.state === "held") holders.push(ticket)
            else tickets.push(ticket)
            assert.strictEqual(ticket.state === "held" ? "held" : "queued", expected)
          } else if (s.kind === "release") {
            if (holders.length === 0) continue
            const [holder] = holders.splice(s.pick % holders.length, 1)
            holder.state = "gone"
            queue.release(holder.cost)
            model.inFlight -= holder.cost
            model.dispatch()
          } else if (s.kind === "abandon") {
            const live = tickets.filter((t) => t.state === "queued")
            if (live.length === 0) continue
            const ticket = live[s.pick % live.length]
            queue.abandon(ticket)
            model.remove(ticket.id)
            model.dispatch()
          } else {
            queue.resize(s.permits)
            model.permits = s.permits
            model.dispatch()
          }
          collect()
          assert.deepStrictEqual(granted, model.granted)
          assert.strictEqual(queue.inFlight, model.inFlight)
          assert.strictEqual(queue.waiting, model.queued.length)
          assert.strictEqual(queue.waitingPermits, model.queued.reduce((sum, q) => sum + q.cost, 0))
          for (const lane of queue.lanes.values()) {
            assert.strictEqual(lane.waiting, model.queued.filter((q) => q.lane === lane.name).length)
            assert.strictEqual(lane.granted, model.share.get(lane.name) ?? 0)
          }
        }
        // every holder gives back: every permit returns and nothing is left queued
        for (const t of tickets) if (t.state === "queued") queue.abandon(t)
        collect()
        for (const h of holders) queue.release(h.cost)
        assert.deepStrictEqual([queue.inFlight, queue.waiting, queue.waitingPermits], [0, 0, 0])
      }),
      { numRuns: 300 }
    )
  })
})
