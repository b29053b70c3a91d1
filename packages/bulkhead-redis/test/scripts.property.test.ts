/**
 * The Lua state machine against a model: random sequences of acquires (weighted, with a queue
 * bound), releases and cancels (of live and stale lease ids), renewals, lease expiries of holders
 * and waiters, resizes, and claims (holders Redis may not count after an outage: members it holds,
 * members it lost whose permits are free, and members it lost whose permits are not), run on a
 * real Redis. After every step Redis holds exactly what the model holds — the queue in ticket
 * order, the leases, the counters — and every reply is the model's: strict FIFO, no overtaking,
 * fencing, no permit leaked or doubled. Redis's own counters are also checked against its tickets:
 * `used` is the sum of the held costs, `wanted` that of the queued ones, and a head left queued
 * does not fit.
 */
import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { Redis } from "ioredis"
import { inject } from "vitest"
import { keysOf, scripts } from "../src/internal/scripts.js"
import { uniqueName } from "./utils/helpers.js"

const url = inject("redisUrl")
/** Long enough that nothing expires by itself during a run: expiries are steps of their own. */
const TTL = "600000"

type Step =
  | { readonly kind: "acquire"; readonly cost: number; readonly maxWaiting: number; readonly mayQueue: boolean }
  | { readonly kind: "leave"; readonly pick: number; readonly keep: boolean }
  | { readonly kind: "renew"; readonly pick: number }
  | { readonly kind: "expireHeld"; readonly pick: number }
  | { readonly kind: "expireWaiting"; readonly pick: number }
  | { readonly kind: "resize"; readonly permits: number }
  | {
    readonly kind: "claim"
    /** A held lease whose deadline passes just before the claim: the claim script expires it first. */
    readonly expireFirst: number | null
    /** `fresh`: a member Redis never saw (a fallback holder); otherwise one issued before, queued or not. */
    readonly members: ReadonlyArray<{ readonly pick: number; readonly fresh: boolean; readonly cost: number }>
  }

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("acquire" as const),
      cost: fc.integer({ min: 1, max: 3 }),
      maxWaiting: fc.integer({ min: -1, max: 4 }),
      mayQueue: fc.boolean()
    })
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("leave" as const), pick: fc.nat(), keep: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("renew" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("expireHeld" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("expireWaiting" as const), pick: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("resize" as const), permits: fc.integer({ min: 1, max: 4 }) })
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("claim" as const),
      expireFirst: fc.option(fc.nat()),
      members: fc.array(
        fc.record({ pick: fc.nat(), fresh: fc.boolean(), cost: fc.integer({ min: 1, max: 3 }) }),
        { minLength: 1, maxLength: 3 }
      )
    })
  }
)

class Model {
  queue: Array<{ readonly member: string; readonly cost: number }> = []
  held = new Map<string, number>()
  constructor(public permits: number) {}
  get used(): number {
    let sum = 0
    for (const cost of this.held.values()) sum += cost
    return sum
  }
  get wanted(): number {
    return this.queue.reduce((sum, t) => sum + t.cost, 0)
  }
  /** Grants from the head while the head fits; never past it. */
  grant(): Array<string> {
    const granted: Array<string> = []
    while (this.queue.length > 0 && this.used + this.queue[0].cost <= this.permits) {
      const head = this.queue.shift()!
      this.held.set(head.member, head.cost)
      granted.push(head.member)
    }
    return granted
  }
}

const fail = (message: string): never => {
  throw new Error(message)
}

const check = async (redis: Redis, keys: ReadonlyArray<string>, model: Model, after: string) => {
  const [, meta, queue, wlease, held, tickets] = keys
  const [q, w, h, t, m] = await Promise.all([
    redis.zrange(queue, 0, -1),
    redis.zrange(wlease, 0, -1),
    redis.zrange(held, 0, -1),
    redis.hgetall(tickets),
    redis.hgetall(meta)
  ])
  const expected = {
    queue: model.queue.map((t) => t.member),
    waitingLeases: [...model.queue.map((t) => t.member)].sort(),
    held: [...model.held.keys()].sort(),
    tickets: [...model.queue.map((t) => t.member), ...model.held.keys()].sort(),
    used: model.used,
    wanted: model.wanted,
    permits: model.permits
  }
  const actual = {
    queue: q,
    waitingLeases: [...w].sort(),
    held: [...h].sort(),
    tickets: Object.keys(t).sort(),
    used: Number(m.used ?? 0),
    wanted: Number(m.wanted ?? 0),
    permits: Number(m.permits ?? 0)
  }
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    fail(`after ${after}: Redis ${JSON.stringify(actual)}, model ${JSON.stringify(expected)}`)
  }
  // Redis against itself: the counters are the sums of its tickets' costs, and a head left queued does not fit
  const costOf = (member: string) => Number((t[member] ?? "0:0").split(":")[0])
  const sum = (members: ReadonlyArray<string>) => members.reduce((total, member) => total + costOf(member), 0)
  if (sum(h) !== actual.used || sum(q) !== actual.wanted) {
    fail(`after ${after}: used ${actual.used} and wanted ${actual.wanted}, tickets ${JSON.stringify(t)}`)
  }
  if (q.length > 0 && actual.used + costOf(q[0]) <= actual.permits) {
    fail(`after ${after}: the head ${q[0]} fits (used ${actual.used} of ${actual.permits}) and was not granted`)
  }
}

describe("the Lua state machine", () => {
  it("matches the model over random sequences of steps", async () => {
    const redis = new Redis(url, { maxRetriesPerRequest: 1 })
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 4 }),
          fc.array(step, { minLength: 1, maxLength: 40 }),
          async (k, steps) => {
            const name = uniqueName("model")
            const { channel, keys } = keysOf("sluice:bh:", name)
            const run = (script: string, ...args: Array<string>) =>
              redis.eval(script, keys.length, ...keys, channel, String(k), ...args) as Promise<Array<unknown>>
            const model = new Model(k)
            const issued: Array<string> = []
            const costs = new Map<string, number>()
            const pick = (n: number) => issued.length === 0 ? "0:none" : issued[n % issued.length]
            await run(scripts.resize)
            for (const [i, s] of steps.entries()) {
              const at = `step ${i} ${JSON.stringify(s)}`
              switch (s.kind) {
                case "acquire": {
                  const reply = await run(
                    scripts.acquire,
                    `n${i}`,
                    String(s.cost),
                    TTL,
                    String(s.maxWaiting),
                    s.mayQueue ? "1" : "0"
                  )
                  const kind = Number(reply[0])
                  const member = String(reply[1])
                  const ahead = model.queue.length
                  const expected = ahead === 0 && model.used + s.cost <= model.permits
                    ? 1
                    : s.maxWaiting >= 0 && ahead >= s.maxWaiting
                    ? 2
                    : s.mayQueue
                    ? 0
                    : 3
                  if (kind !== expected) fail(`${at}: kind ${kind}, model ${expected}`)
                  if (Number(reply[4]) !== ahead) fail(`${at}: ${reply[4]} ahead, model ${ahead}`)
                  if (kind === 1) model.held.set(member, s.cost)
                  if (kind === 0) model.queue.push({ member, cost: s.cost })
                  if (kind === 0 || kind === 1) {
                    issued.push(member)
                    costs.set(member, s.cost)
                  }
                  if (model.grant().length > 0) fail(`${at}: the model grants after an acquire, Redis did not`)
                  break
                }
                case "leave": {
                  const member = pick(s.pick)
                  const reply = await run(scripts.leave, member, s.keep ? "1" : "0")
                  const state = model.held.has(member) ? 1 : model.queue.some((t) => t.member === member) ? 2 : 0
                  if (Number(reply[0]) !== state) fail(`${at}: state ${reply[0]}, model ${state}`)
                  if (state === 1 && !s.keep) model.held.delete(member)
                  if (state === 2) model.queue = model.queue.filter((t) => t.member !== member)
                  model.grant()
                  break
                }
                case "renew": {
                  const member = pick(s.pick)
                  const reply = await run(scripts.renew, member)
                  const status = model.held.has(member) ? "h" : model.queue.some((t) => t.member === member) ? "w" : "x"
                  if (reply[1] !== status) fail(`${at}: status ${String(reply[1])}, model ${status}`)
                  break
                }
                case "expireHeld":
                case "expireWaiting": {
                  const member = pick(s.pick)
                  const key = s.kind === "expireHeld" ? keys[4] : keys[3]
                  // the lease's deadline moved into the past, as if its holder had stopped renewing
                  await redis.zadd(key, "XX", 1, member)
                  await run(scripts.stats)
                  if (s.kind === "expireHeld") model.held.delete(member)
                  else model.queue = model.queue.filter((t) => t.member !== member)
                  model.grant()
                  break
                }
                case "claim": {
                  const heldNow = [...model.held.keys()]
                  if (s.expireFirst !== null && heldNow.length > 0) {
                    // past its deadline, and no script has run since: the claim's own expiry frees it
                    const member = heldNow[s.expireFirst % heldNow.length]
                    await redis.zadd(keys[4], "XX", 1, member)
                    model.held.delete(member)
                  }
                  // what the claim script does first: expire, then grant from the head
                  model.grant()
                  const triples = s.members.map((m, j) => {
                    if (m.fresh || issued.length === 0) {
                      const member = `${1_000_000 + i * 10 + j}:fallback`
                      issued.push(member)
                      costs.set(member, m.cost)
                      return { member, cost: m.cost }
                    }
                    const member = issued[m.pick % issued.length]
                    return { member, cost: costs.get(member) ?? m.cost }
                  })
                  const reply = await run(scripts.claim, ...triples.flatMap((t) => [t.member, String(t.cost), TTL]))
                  const expected = triples.map(({ cost, member }) => {
                    if (model.held.has(member)) return "h"
                    // a waiting ticket is never claimed: its grant would count it twice
                    if (model.queue.some((t) => t.member === member)) return "x"
                    if (model.used + cost > model.permits) return "x"
                    model.held.set(member, cost)
                    return "c"
                  })
                  if (JSON.stringify(reply.slice(1)) !== JSON.stringify(expected)) {
                    fail(
                      `${at} ${JSON.stringify(triples)}: statuses ${JSON.stringify(reply.slice(1))}, model ${
                        JSON.stringify(expected)
                      }`
                    )
                  }
                  if (model.grant().length > 0) fail(`${at}: the model grants after a claim, Redis did not`)
                  break
                }
                case "resize": {
                  await redis.eval(scripts.resize, keys.length, ...keys, channel, String(s.permits))
                  model.permits = s.permits
                  model.grant()
                  break
                }
              }
              await check(redis, keys, model, at)
            }
            await redis.del(...keys)
          }
        ),
        { numRuns: 60 }
      )
    } finally {
      await redis.quit()
    }
  }, 120_000)

  it("a waiting ticket is never claimed: its grant would count its permits a second time", async () => {
    const redis = new Redis(url, { maxRetriesPerRequest: 1 })
    try {
      const { channel, keys } = keysOf("sluice:bh:", uniqueName("claim-queued"))
      const run = (script: string, ...args: Array<string>) =>
        redis.eval(script, keys.length, ...keys, channel, "3", ...args) as Promise<Array<unknown>>
      const held = await run(scripts.acquire, "a", "2", TTL, "-1", "1")
      const head = await run(scripts.acquire, "b", "3", TTL, "-1", "1")
      const behind = await run(scripts.acquire, "c", "1", TTL, "-1", "1")
      assert.deepStrictEqual([held[0], head[0], behind[0]], [1, 0, 0])
      const claimed = await run(scripts.claim, String(behind[1]), "1", TTL)
      assert.strictEqual(claimed[1], "x")
      assert.deepStrictEqual(await redis.hmget(keys[1], "used", "wanted"), ["2", "4"])
    } finally {
      await redis.quit()
    }
  })
})
