/**
 * The lane scripts against `LaneQueue` (core, the in-process bulkhead's queue, through
 * `utils/laneModel.ts`), under both policies, on a real Redis:
 * random batches of acquires (weighted, in any lane, with the lane's and the whole queue's bound,
 * allowed to queue or not, this instance's or another's), releases and leaves of live and stale
 * members, abandons by nonce; renewals, expiries of holders and waiters, resizes, claims, stats,
 * and (priority) due times set by the test so that lanes tie and age. After every step Redis holds
 * exactly the model's state: the global queue, each lane's queue in ticket order, the leases, the
 * counters, each waiting ticket's due time and lane, the round of busy lanes, whose turn has had
 * its weight, each busy lane's credit to the last bit, the permits granted per lane; and every reply
 * and every grant published is the model's.
 */
import { assert, describe, it } from "@effect/vitest"
import { laneKeysOf, laneScripts, policyText } from "@sluice/core/FleetScripts"
import { FastCheck as fc } from "effect"
import { Redis } from "ioredis"
import { inject } from "vitest"
import { uniqueName } from "./utils/helpers.js"
import { LaneModel, type ModelPolicy } from "./utils/laneModel.js"

const url = inject("redisUrl")
const TTL = "600000"
const MINE = "a1"
const THEIRS = "b2"

/** Gaps far above a run's length: fresh tickets of different lanes never tie; aged ones (0 to 3) go first. */
const PRIORITY: ModelPolicy = { _tag: "priority", lanes: [["hi", 0], ["mid", 5e9], ["lo", 1e10]] }
/** A weight of 0.1 makes credits that no decimal string of 14 digits holds. */
const FAIR: ModelPolicy = { _tag: "fairShare", defaultWeight: 1, weights: new Map([["a", 3], ["b", 0.1]]) }
const FAIR_LANES = ["a", "b", "c", "d"]

const textOf = (policy: ModelPolicy) =>
  policyText(
    policy._tag === "priority"
      ? { _tag: "priority", lanes: policy.lanes.map(([name, yieldForMillis]) => ({ name, yieldForMillis })) }
      : { _tag: "fairShare", defaultWeight: policy.defaultWeight, weights: policy.weights }
  )

type Op =
  | {
    readonly kind: "acquire"
    readonly cost: number
    readonly lane: number
    readonly laneMax: number
    readonly mayQueue: boolean
    readonly mine: boolean
  }
  | { readonly kind: "leave"; readonly pick: number; readonly keep: boolean }

type Step =
  | {
    readonly kind: "batch"
    readonly maxWaiting: number
    readonly abandons: ReadonlyArray<number>
    readonly ops: ReadonlyArray<Op>
  }
  | { readonly kind: "renew"; readonly pick: number }
  | { readonly kind: "expireHeld"; readonly pick: number }
  | { readonly kind: "expireWaiting"; readonly pick: number }
  | { readonly kind: "age"; readonly pick: number; readonly due: number }
  | { readonly kind: "resize"; readonly permits: number }
  | { readonly kind: "stats" }
  | {
    readonly kind: "claim"
    readonly members: ReadonlyArray<{ readonly pick: number; readonly fresh: boolean; readonly cost: number }>
  }

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("acquire" as const),
      cost: fc.integer({ min: 1, max: 3 }),
      lane: fc.nat(),
      laneMax: fc.integer({ min: -1, max: 3 }),
      mayQueue: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
      mine: fc.boolean()
    })
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("leave" as const), pick: fc.nat(), keep: fc.boolean() }) }
)

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant("batch" as const),
      maxWaiting: fc.integer({ min: -1, max: 6 }),
      abandons: fc.oneof({ weight: 4, arbitrary: fc.constant([]) }, {
        weight: 1,
        arbitrary: fc.array(fc.nat(), { minLength: 1, maxLength: 2 })
      }),
      ops: fc.array(op, { minLength: 1, maxLength: 5 })
    })
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("renew" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("expireHeld" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("expireWaiting" as const), pick: fc.nat() }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("age" as const), pick: fc.nat(), due: fc.integer({ min: 0, max: 1 }) })
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("resize" as const), permits: fc.integer({ min: 1, max: 5 }) })
  },
  { weight: 1, arbitrary: fc.constant({ kind: "stats" as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("claim" as const),
      members: fc.array(fc.record({ pick: fc.nat(), fresh: fc.boolean(), cost: fc.integer({ min: 1, max: 3 }) }), {
        minLength: 1,
        maxLength: 2
      })
    })
  }
)

const fail = (message: string): never => {
  throw new Error(message)
}
const costOf = (member: string) => Number(member.split(":")[1])
const nonceOf = (member: string) => member.slice(member.lastIndexOf(":") + 1)
const scoredMembers = (redis: Redis, key: string) => redis.zrange(key, 0, -1)

const check = async (
  redis: Redis,
  keys: ReadonlyArray<string>,
  model: LaneModel,
  lanes: ReadonlyArray<string>,
  text: string,
  at: string
) => {
  const [, metaKey, queueKey, wleaseKey, heldKey, lanesKey, ticketsKey, roundKey] = keys
  const [queue, wlease, held, meta, tickets, laneHash, round] = await Promise.all([
    scoredMembers(redis, queueKey),
    scoredMembers(redis, wleaseKey),
    scoredMembers(redis, heldKey),
    redis.hgetall(metaKey),
    redis.hgetall(ticketsKey),
    redis.hgetall(lanesKey),
    redis.lrange(roundKey, 0, -1)
  ])
  const byTicket = [...model.queue].sort((a, b) => a.ticket - b.ticket)
  const expected = {
    queue: byTicket.map((t) => t.member),
    waitingLeases: byTicket.map((t) => t.member).sort(),
    held: [...model.held.keys()].sort(),
    used: model.used,
    wanted: model.wanted,
    permits: model.permits,
    lanes: Object.fromEntries(lanes.map((lane) => [lane, model.inLane(lane).map((t) => t.member)])),
    tickets: byTicket.map((t) => `${t.member} ${t.lane}`).sort(),
    granted: Object.fromEntries([...model.grantedTo].sort(([a], [b]) => (a < b ? -1 : 1))),
    round: model.fair ? model.round : [],
    policy: text
  }
  const laneQueues = await Promise.all(lanes.map((lane) => scoredMembers(redis, `${lanesKey}:${lane}`)))
  const actual = {
    queue,
    waitingLeases: [...wlease].sort(),
    held: [...held].sort(),
    used: Number(meta.used ?? 0),
    wanted: Number(meta.wanted ?? 0),
    permits: Number(meta.permits ?? 0),
    lanes: Object.fromEntries(lanes.map((lane, i) => [lane, laneQueues[i]])),
    tickets: Object.entries(tickets).map(([member, record]) => `${member} ${record.slice(record.indexOf(" ") + 1)}`)
      .sort(),
    granted: Object.fromEntries(
      Object.entries(laneHash).filter(([field]) => field.startsWith("g:")).map(([f, n]) => [f.slice(2), Number(n)])
        .sort(([a], [b]) => (a < b ? -1 : 1))
    ),
    round,
    policy: laneHash.policy
  }
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    fail(`after ${at}:\n Redis ${JSON.stringify(actual)}\n model ${JSON.stringify(expected)}`)
  }
  // due times: the test's own exactly, a fresh one the script's clock plus its lane's yieldFor
  const now = Date.now()
  for (const t of model.queue) {
    const due = Number(tickets[t.member].split(" ")[0])
    if (t.exact ? due !== t.due : Math.abs(due - now - model.yieldOf(t.lane)) > 120_000) {
      fail(
        `after ${at}: ${t.member} is due at ${due}, model ${
          t.exact ? t.due : `about ${now} + ${model.yieldOf(t.lane)}`
        }`
      )
    }
    if (!t.exact) model.setDue(t, due)
  }
  if (model.fair) {
    if ((laneHash.started === "1") !== model.started) {
      fail(`after ${at}: started ${laneHash.started}, model ${model.started}`)
    }
    for (const [field, value] of Object.entries(laneHash)) {
      if (!field.startsWith("c:")) continue
      const lane = field.slice(2)
      if (!model.round.includes(lane)) fail(`after ${at}: lane ${lane} has credit ${value} out of the round`)
    }
    for (const lane of model.round) {
      const stored = Number(laneHash[`c:${lane}`] ?? 0)
      if (stored !== model.creditOf(lane)) {
        fail(`after ${at}: ${lane}'s credit ${stored}, LaneQueue ${model.creditOf(lane)}`)
      }
    }
  }
}

const runModel =
  (policy: ModelPolicy) =>
  async (k: number, steps: ReadonlyArray<Step>, redis: Redis, heard: Map<string, Array<string>>, subscriber: Redis) => {
    const lanes = policy._tag === "priority" ? policy.lanes.map(([name]) => name) : FAIR_LANES
    const text = textOf(policy)
    const name = uniqueName("lanes")
    const { channel, keys } = laneKeysOf("sluice:bh:", name)
    const run = (script: string, ...args: Array<string>) =>
      redis.eval(script, keys.length, ...keys, channel, String(k), text, ...args) as Promise<Array<unknown>>
    const model = new LaneModel(k, policy)
    const issued: Array<string> = []
    const pick = (n: number) => issued.length === 0 ? "0:none" : issued[n % issued.length]
    const mine = `${channel}:${MINE}`
    const theirs = `${channel}:${THEIRS}`
    const expectedHeard = new Map<string, Array<string>>()
    // a script's grants to publish: one message per instance at its end
    let stepGrants: Array<string> = []
    const publish = (members: ReadonlyArray<string>) => stepGrants.push(...members)
    const published = () => {
      const others = stepGrants.filter((m) => !m.includes(`:${MINE}.`))
      const own = stepGrants.filter((m) => m.includes(`:${MINE}.`))
      // no head run under lanes: every message's limit is 0
      for (const [to, list] of [[theirs, others], [mine, own]] as const) {
        if (list.length > 0) expectedHeard.set(to, [...(expectedHeard.get(to) ?? []), ["0", ...list].join(" ")])
      }
      stepGrants = []
    }
    heard.clear()
    await subscriber.ssubscribe(mine, theirs)
    await run(laneScripts.resize)
    for (const [i, s] of steps.entries()) {
      const at = `step ${i} ${JSON.stringify(s)}`
      switch (s.kind) {
        case "batch": {
          const targets = s.ops.map((o) => (o.kind === "leave" ? pick(o.pick) : ""))
          const abandoned = s.abandons.map((n, j) => (issued.length === 0 ? `zz.${i}x${j}` : nonceOf(pick(n))))
          const args = [MINE, TTL, String(s.maxWaiting)]
          for (const nonce of abandoned) args.push("a", nonce, "")
          s.ops.forEach((o, j) => {
            if (o.kind === "acquire") {
              args.push(
                o.mayQueue ? "q" : "t",
                `${o.mine ? MINE : THEIRS}.${i}x${j}`,
                `${o.cost} ${o.laneMax} ${lanes[o.lane % lanes.length]}`
              )
            } else {
              args.push(o.keep ? "k" : "r", targets[j], "")
            }
          })
          const reply = await run(laneScripts.batch, ...args)
          const first = abandoned.length + 2
          if (reply.length !== s.ops.length + first) fail(`${at}: ${reply.length - 2} replies`)
          const grantedAll: Array<string> = []
          const abandonStates = new Map<string, number>()
          for (const nonce of abandoned) {
            if (abandonStates.has(nonce)) continue
            const holder = [...model.held.keys()].find((m) => nonceOf(m) === nonce)
            const waiter = model.queue.find((t) => nonceOf(t.member) === nonce)
            if (holder !== undefined) model.held.delete(holder)
            else if (waiter !== undefined) model.dequeue(waiter.member)
            abandonStates.set(nonce, holder !== undefined ? 1 : waiter !== undefined ? 2 : 0)
          }
          if ([...abandonStates.values()].some((state) => state > 0)) grantedAll.push(...model.grant())
          abandoned.forEach((nonce, j) => {
            const expected = [abandonStates.get(nonce), model.used, model.permits]
            if (JSON.stringify(reply[j + 2]) !== JSON.stringify(expected)) {
              fail(`${at} abandon ${nonce}: ${JSON.stringify(reply[j + 2])}, model ${JSON.stringify(expected)}`)
            }
          })
          s.ops.forEach((o, j) => {
            const answer = reply[j + first] as Array<unknown>
            const here = `${at} operation ${j}`
            if (o.kind === "acquire") {
              const lane = lanes[o.lane % lanes.length]
              if (model.wanted > 0 || model.used + o.cost > model.permits) grantedAll.push(...model.grant())
              const queued = model.queue.length
              const member = String(answer[1])
              let expected: Array<unknown>
              if (queued === 0 && model.used + o.cost <= model.permits) {
                model.held.set(member, o.cost)
                model.grantedTo.set(lane, (model.grantedTo.get(lane) ?? 0) + o.cost)
                expected = [1, member, model.used, model.permits, 0, 0, 0]
              } else {
                const inLane = model.inLane(lane).length
                const laneFull = o.laneMax >= 0 && inLane >= o.laneMax
                const full = laneFull || (s.maxWaiting >= 0 && queued >= s.maxWaiting)
                // the member's ticket number is the next one: read from the member, or from a refusal's absence
                const ticket = Number.parseInt(member, 10)
                if (answer[0] === 2 || answer[0] === 3) {
                  // a refused probe queued and left: the model queues it too, under the number Redis took
                  const probe = `probe-${i}-${j}`
                  model.enqueue({
                    member: probe,
                    ticket: Infinity,
                    cost: o.cost,
                    lane,
                    due: Date.now() + model.yieldOf(lane),
                    exact: false
                  })
                  const grants = model.grant()
                  if (grants.includes(probe)) fail(`${here}: the model grants the refused ticket`)
                  grantedAll.push(...grants)
                  model.dequeue(probe)
                  grantedAll.push(...model.grant())
                  expected = [full ? 2 : 3, "", model.used, model.permits, inLane, queued, laneFull ? 1 : 0]
                  if (!full && o.mayQueue) fail(`${here}: refused, the model queues it`)
                } else {
                  if (!member.endsWith(`:${o.cost}:${TTL}:${o.mine ? MINE : THEIRS}.${i}x${j}`)) {
                    fail(`${here}: member ${member}`)
                  }
                  model.enqueue({
                    member,
                    ticket,
                    cost: o.cost,
                    lane,
                    due: Date.now() + model.yieldOf(lane),
                    exact: false
                  })
                  const grants = model.grant()
                  const onArrival = grants.includes(member)
                  grantedAll.push(...grants.filter((m) => m !== member))
                  if (!onArrival && (full || !o.mayQueue)) {
                    fail(`${here}: queued, the model refuses it (${JSON.stringify(answer)})`)
                  }
                  // a lane is counted once a ticket of it waits (a refused one leaves no trace)
                  model.seen(lane)
                  expected = [onArrival ? 1 : 0, member, model.used, model.permits, inLane, queued, 0]
                }
              }
              if (member !== "") issued.push(member)
              if (JSON.stringify(answer) !== JSON.stringify(expected)) {
                fail(`${here}: ${JSON.stringify(answer)}, model ${JSON.stringify(expected)}`)
              }
            } else {
              const member = targets[j]
              const state = model.held.has(member) ? 1 : model.queue.some((t) => t.member === member) ? 2 : 0
              if (state === 1 && !o.keep) model.held.delete(member)
              if (state === 2) model.dequeue(member)
              // the fast path: a release with nobody queued grants nothing
              if (o.keep || model.wanted > 0 || state === 2) grantedAll.push(...model.grant())
              if (JSON.stringify(answer) !== JSON.stringify([state, model.used, model.permits])) {
                fail(`${here}: ${JSON.stringify(answer)}, model ${JSON.stringify([state, model.used, model.permits])}`)
              }
            }
          })
          const grantedMine = grantedAll.filter((m) => m.includes(`:${MINE}.`))
          if (JSON.stringify(reply[0]) !== JSON.stringify(grantedMine)) {
            fail(`${at}: grants returned ${JSON.stringify(reply[0])}, model ${JSON.stringify(grantedMine)}`)
          }
          if (reply[1] !== 0) fail(`${at}: a head run's limit ${String(reply[1])} under lanes`)
          publish(grantedAll.filter((m) => !m.includes(`:${MINE}.`)))
          break
        }
        case "renew": {
          const member = pick(s.pick)
          const reply = await run(laneScripts.renew, member)
          publish(model.grant())
          const status = model.held.has(member) ? "h" : model.queue.some((t) => t.member === member) ? "w" : "x"
          if (reply[1] !== status) fail(`${at}: status ${String(reply[1])}, model ${status}`)
          break
        }
        case "expireHeld":
        case "expireWaiting": {
          const member = pick(s.pick)
          await redis.zadd(s.kind === "expireHeld" ? keys[4] : keys[3], "XX", 1, member)
          await run(laneScripts.stats)
          if (s.kind === "expireHeld") model.held.delete(member)
          else model.dequeue(member)
          publish(model.grant())
          break
        }
        case "age": {
          if (model.fair || model.queue.length === 0) break
          const t = model.queue[s.pick % model.queue.length]
          await redis.hset(keys[6], t.member, `${s.due} ${t.lane}`)
          model.setDue(t, s.due)
          t.exact = true
          break
        }
        case "resize": {
          await redis.eval(laneScripts.resize, keys.length, ...keys, channel, String(s.permits), text)
          model.permits = s.permits
          publish(model.grant())
          break
        }
        case "stats": {
          const reply = await run(laneScripts.stats)
          publish(model.grant())
          const perLane = (model.fair ? [...model.grantedTo.keys()].sort() : lanes).map((lane) => {
            const waiting = model.inLane(lane)
            return [lane, waiting.length, waiting.reduce((n, t) => n + t.cost, 0), model.grantedTo.get(lane) ?? 0]
          })
          const expected = [model.permits, model.used, model.held.size, model.queue.length, model.wanted, perLane]
          if (JSON.stringify(reply) !== JSON.stringify(expected)) {
            fail(`${at}: ${JSON.stringify(reply)}, model ${JSON.stringify(expected)}`)
          }
          break
        }
        case "claim": {
          publish(model.grant())
          const members = s.members.map((m, j) => {
            if (m.fresh || issued.length === 0) return `c:${m.cost}:${TTL}:fb.${i}x${j}`
            return pick(m.pick)
          })
          const reply = await run(laneScripts.claim, ...members)
          const expected = members.map((member) => {
            if (model.held.has(member)) return "h"
            if (model.dequeue(member)) {
              publish(model.grant())
              return "x"
            }
            const cost = costOf(member)
            if (Number.isNaN(cost) || model.used + cost > model.permits) return "x"
            model.held.set(member, cost)
            return "c"
          })
          if (JSON.stringify(reply.slice(1)) !== JSON.stringify(expected)) {
            fail(`${at}: statuses ${JSON.stringify(reply.slice(1))}, model ${JSON.stringify(expected)}`)
          }
          break
        }
      }
      published()
      await check(redis, keys, model, lanes, text, at)
    }
    await subscriber.call("PING")
    await subscriber.sunsubscribe(mine, theirs)
    for (const to of [mine, theirs]) {
      const got = JSON.stringify(heard.get(to) ?? [])
      const want = JSON.stringify(expectedHeard.get(to) ?? [])
      if (got !== want) fail(`published on ${to}: ${got}, model ${want}`)
    }
    await redis.del(...keys, ...lanes.map((lane) => `${keys[5]}:${lane}`))
  }

describe("the Lua lane policies", () => {
  for (const policy of [PRIORITY, FAIR]) {
    it(`follow LaneQueue over random sequences of steps (${policy._tag})`, async () => {
      const redis = new Redis(url, { maxRetriesPerRequest: 1 })
      const subscriber = new Redis(url)
      const heard = new Map<string, Array<string>>()
      subscriber.on("smessage", (to: string, message: string) => {
        heard.set(to, [...(heard.get(to) ?? []), message])
      })
      try {
        await fc.assert(
          fc.asyncProperty(
            fc.integer({ min: 1, max: 4 }),
            fc.array(step, { minLength: 1, maxLength: 40 }),
            (k, steps) => runModel(policy)(k, steps, redis, heard, subscriber)
          ),
          { numRuns: 60 }
        )
      } finally {
        await redis.quit()
        await subscriber.quit()
      }
    }, 120_000)
  }

  it("fair share: a grant that takes millions of turns is one pass of closed-form rounds", async () => {
    // 3,000 tenants at weight 0.01, each head costing 10: a turn at a time, the first grant needs
    // about 3 million turns (minutes of Lua, blocking the server); "x" at 0.013 needs the fewest rounds
    const redis = new Redis(url, { maxRetriesPerRequest: 1 })
    try {
      const tenants = 3000
      const policy = policyText({ _tag: "fairShare", defaultWeight: 0.01, weights: new Map([["x", 0.013]]) })
      const { channel, keys } = laneKeysOf("sluice:bh:", uniqueName("spin"))
      const run = (script: string, ...args: Array<string>) =>
        redis.eval(script, keys.length, ...keys, channel, "10", policy, ...args) as Promise<Array<unknown>>
      const batch = (...ops: Array<string>) => run(laneScripts.batch, MINE, TTL, "-1", ...ops)
      await run(laneScripts.resize)
      const [, , holding] = await batch("q", `${MINE}.hold`, "10 -1 hold") as Array<Array<unknown>>
      const names = [...Array.from({ length: tenants }, (_, i) => `t${i}`), "x"]
      for (let from = 0; from < names.length; from += 500) {
        await batch(...names.slice(from, from + 500).flatMap((lane) => ["q", `${MINE}.${lane}`, `10 -1 ${lane}`]))
      }
      // x joined last and needs ⌈10 / 0.013⌉ = 770 turns, the tenants 1,000: x is granted first
      const [first] = await batch("r", String(holding[1]), "") as Array<Array<string>>
      assert.deepStrictEqual(first.map((m) => m.slice(m.lastIndexOf(".") + 1)), ["x"])
      const lanes = await redis.hgetall(keys[5])
      // every tenant had its 770 turns: one, then the 768 rounds none could end in added in one pass
      // (x needs ⌈(10 − 0.013) / 0.013⌉ − 1 = 768 more), then one: to the bit of those sums
      const credits = new Set(names.slice(0, tenants).map((lane) => lanes[`c:${lane}`]))
      assert.deepStrictEqual([...credits].map(Number), [0.01 + 768 * 0.01 + 0.01])
      // then t0, next after x in the round: the tenants tie, the first in the round goes first
      const [second] = await batch("r", first[0], "") as Array<Array<string>>
      assert.deepStrictEqual(second.map((m) => m.slice(m.lastIndexOf(".") + 1)), ["t0"])
    } finally {
      await redis.quit()
    }
  }, 60_000)

  it("fair share: a name kept busy by ever new tenants keeps its lane state bounded", async () => {
    const redis = new Redis(url, { maxRetriesPerRequest: 1 })
    try {
      const policy = policyText({ _tag: "fairShare", defaultWeight: 1, weights: new Map() })
      const { channel, keys } = laneKeysOf("sluice:bh:", uniqueName("grow"))
      const run = (script: string, ...args: Array<string>) =>
        redis.eval(script, keys.length, ...keys, channel, "1", policy, ...args) as Promise<Array<unknown>>
      const batch = (...ops: Array<string>) => run(laneScripts.batch, MINE, TTL, "-1", ...ops)
      await run(laneScripts.resize)
      await batch("q", `${MINE}.hold`, "1 -1 keep")
      // refused tries (the permit is held, no wait allowed) leave no trace
      for (let from = 0; from < 1500; from += 500) {
        await batch(
          ...Array.from({ length: 500 }, (_, i) => ["t", `${MINE}.t${from + i}`, `1 -1 try${from + i}`]).flat()
        )
      }
      const counts = async () => Object.keys(await redis.hgetall(keys[5])).filter((f) => f.startsWith("g:"))
      assert.deepStrictEqual(await counts(), ["g:keep"])
      // 4,000 tenants that queue and leave, 500 to a script: past 1,000 counts the idle lanes' go
      for (let from = 0; from < 4000; from += 500) {
        const ops = Array.from({ length: 500 }, (_, i) => `${from + i}`)
        const queued = await batch(...ops.flatMap((n) => ["q", `${MINE}.q${n}`, `1 -1 tenant${n}`])) as Array<
          Array<unknown>
        >
        await batch(...queued.slice(2).flatMap((reply) => ["r", String(reply[1]), ""]))
      }
      const left = await counts()
      assert.isAtMost(left.length, 1000 + 500)
      assert.include(left, "g:tenant3999")
      const stats = await run(laneScripts.stats)
      assert.strictEqual((stats[5] as Array<unknown>).length, left.length)
    } finally {
      await redis.quit()
    }
  })

  it("priority: an acquire in a lane outside the policy fails the whole batch, before anything is written", async () => {
    const redis = new Redis(url, { maxRetriesPerRequest: 1 })
    try {
      const { channel, keys } = laneKeysOf("sluice:bh:", uniqueName("nolane"))
      const text = textOf(PRIORITY)
      const run = (script: string, ...args: Array<string>) =>
        redis.eval(script, keys.length, ...keys, channel, "2", text, ...args) as Promise<Array<unknown>>
      await run(laneScripts.resize)
      const error = await run(
        laneScripts.batch,
        MINE,
        TTL,
        "-1",
        "q",
        `${MINE}.1`,
        "1 -1 hi",
        "q",
        `${MINE}.2`,
        "1 -1 nope"
      )
        .then(() => "accepted", (e: unknown) => String(e))
      assert.include(error, `no lane nope in the policy ${text}`)
      // the first acquire, in a declared lane, was not run either
      assert.deepStrictEqual(await redis.zrange(keys[4], 0, -1), [])
      assert.strictEqual(await redis.get(keys[0]), null)
    } finally {
      await redis.quit()
    }
  })

  it("a process whose policy differs is refused naming the name's, and changes nothing; an idle name takes a new one", async () => {
    const redis = new Redis(url, { maxRetriesPerRequest: 1 })
    try {
      const { channel, keys } = laneKeysOf("sluice:bh:", uniqueName("policy"))
      const [priority, fair] = [textOf(PRIORITY), textOf(FAIR)]
      const run = (script: string, text: string, ...args: Array<string>) =>
        redis.eval(script, keys.length, ...keys, channel, "1", text, ...args) as Promise<Array<unknown>>
      await run(laneScripts.resize, priority)
      const [, , held] = await run(laneScripts.batch, priority, MINE, TTL, "-1", "q", `${MINE}.1`, "1 -1 hi") as Array<
        Array<unknown>
      >
      assert.strictEqual(held[0], 1)
      for (
        const script of [laneScripts.batch, laneScripts.stats, laneScripts.resize, laneScripts.renew, laneScripts.claim]
      ) {
        assert.deepStrictEqual(await run(script, fair, MINE, TTL, "-1", "q", `${MINE}.2`, "1 -1 a"), [
          "policy",
          priority
        ])
      }
      assert.deepStrictEqual(await redis.zrange(keys[4], 0, -1), [String(held[1])])
      assert.deepStrictEqual(await redis.zrange(keys[2], 0, -1), [])
      // once nothing is held, the next process to set the name up brings its policy
      await run(laneScripts.batch, priority, MINE, TTL, "-1", "r", String(held[1]), "")
      assert.deepStrictEqual(await run(laneScripts.resize, fair), [1])
      assert.strictEqual(await redis.hget(keys[5], "policy"), fair)
      // the lane state written anew on the idle name expires with it
      const [metaTtl, lanesTtl] = await Promise.all([redis.pttl(keys[1]), redis.pttl(keys[5])])
      assert.isAbove(lanesTtl, 3_500_000)
      assert.isAtMost(lanesTtl, 3_600_000)
      assert.isAbove(metaTtl, 3_500_000)
      assert.deepStrictEqual(await run(laneScripts.stats, priority), ["policy", fair])
    } finally {
      await redis.quit()
    }
  })
})
