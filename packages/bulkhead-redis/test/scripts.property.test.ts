/**
 * The Lua state machine against a model: random sequences of batches (acquires, weighted and with
 * a queue bound, releases and cancels of live and stale lease ids, hand-overs from a holder to a
 * waiter, live and stale, several in one script, as one event-loop turn sends them, and the
 * acquires a client gave up on, ended by nonce first in a batch), renewals, waiting leases aged
 * (a grant keeps its waiting lease's deadline: the model knows it to the millisecond),
 * lease expiries of holders
 * and waiters, resizes, and claims (holders Redis may not count after an outage: members it holds,
 * members it lost whose permits are free, and members it lost whose permits are not), run on a
 * real Redis. After every step Redis holds exactly what the model holds — the queue in ticket
 * order, the leases, the counters — and every reply is the model's, a batch's operations answered
 * as if each had run alone, in order, and its caller's grants returned rather than published, with
 * the limit of its head run (every message with that of its instance's):
 * strict FIFO, no overtaking, fencing, no permit leaked or doubled. Redis's own counters are also checked against its tickets:
 * `used` is the sum of the held costs, `wanted` that of the queued ones, and a head left queued
 * does not fit.
 */
import { assert, describe, it } from "@effect/vitest"
import { keysOf, scripts } from "@sluice/core/FleetScripts"
import { FastCheck as fc } from "effect"
import { Redis } from "ioredis"
import { inject } from "vitest"
import { uniqueName } from "./utils/helpers.js"

const url = inject("redisUrl")
/** Long enough that nothing expires by itself during a run: expiries are steps of their own. */
const TTL = "600000"

type Op =
  | {
    readonly kind: "acquire"
    readonly cost: number
    readonly mayQueue: boolean
    /** The batch's caller's ticket (its grants come back in the reply), or another instance's. */
    readonly mine: boolean
  }
  | { readonly kind: "leave"; readonly pick: number; readonly keep: boolean }
  /** A holder's permits handed to a waiter (as the client does, one that costs no more), or stale ids. */
  | { readonly kind: "handOver"; readonly from: number; readonly to: number }

type Step =
  | {
    readonly kind: "batch"
    readonly maxWaiting: number
    /** The lease TTL of the batch's new tickets: a member carries its own. */
    readonly ttl: string
    /** A held lease whose deadline passes just before the batch: expired by the first operation that looks. */
    readonly expireFirst: number | null
    /**
     * Acquires whose caller gave up on them (a command timeout): the nonce of a member issued before
     * (`fresh`: one Redis never saw). The client sends them first in a batch.
     */
    readonly abandons: ReadonlyArray<{ readonly pick: number; readonly fresh: boolean }>
    readonly ops: ReadonlyArray<Op>
  }
  | { readonly kind: "renew"; readonly pick: number }
  | { readonly kind: "expireHeld"; readonly pick: number }
  | { readonly kind: "expireWaiting"; readonly pick: number }
  /** A waiting lease last renewed a while ago (still on): a grant of that ticket keeps its deadline. */
  | { readonly kind: "ageWaiting"; readonly pick: number; readonly leftMillis: number }
  | { readonly kind: "resize"; readonly permits: number }
  | {
    readonly kind: "claim"
    /** A held lease whose deadline passes just before the claim: the claim script expires it first. */
    readonly expireFirst: number | null
    /** `fresh`: a member Redis never saw (a fallback holder); otherwise one issued before, queued or not. */
    readonly members: ReadonlyArray<{ readonly pick: number; readonly fresh: boolean; readonly cost: number }>
  }

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("acquire" as const),
      cost: fc.integer({ min: 1, max: 3 }),
      mayQueue: fc.boolean(),
      mine: fc.boolean()
    })
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("leave" as const), pick: fc.nat(), keep: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("handOver" as const), from: fc.nat(), to: fc.nat() }) }
)

/** The caller's mark, and another instance's: nonces are `<mark>.<n>`, hexadecimal marks. */
const MINE = "a1"
const THEIRS = "b2"

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 7,
    arbitrary: fc.record({
      kind: fc.constant("batch" as const),
      maxWaiting: fc.integer({ min: -1, max: 4 }),
      ttl: fc.constantFrom(TTL, "900000"),
      expireFirst: fc.option(fc.nat(), { freq: 3 }),
      abandons: fc.oneof(
        { weight: 3, arbitrary: fc.constant([]) },
        {
          weight: 1,
          arbitrary: fc.array(fc.record({ pick: fc.nat(), fresh: fc.boolean() }), { minLength: 1, maxLength: 3 })
        }
      ),
      ops: fc.array(op, { minLength: 1, maxLength: 4 })
    })
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("renew" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("expireHeld" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("expireWaiting" as const), pick: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("ageWaiting" as const),
      pick: fc.nat(),
      leftMillis: fc.integer({ min: 60_000, max: 300_000 })
    })
  },
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
  /**
   * Deadlines known exactly: a waiting lease aged by the test, and the lease of its grant, which
   * keeps it (a grant never outlives the waiting lease). Others are about their TTL from now.
   */
  deadlines = new Map<string, number>()
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
      // a grant from the queue keeps the waiting lease's deadline (known exactly once aged)
      granted.push(head.member)
    }
    return granted
  }
}

const fail = (message: string): never => {
  throw new Error(message)
}

/** A member's cost: members are `<ticket>:<cost>:<ttl>:<nonce>`. */
const costOf = (member: string) => Number(member.split(":")[1])

/** The scripts' look at the head of the queue for its run (RUN_WINDOW). */
const RUN_WINDOW = 32

/** The bulkhead instance of a member: its nonce's mark. */
const ownerOf = (member: string) => /^\d+:\d+:\d+:([0-9a-f]+)\./.exec(member)?.[1] ?? ""

/**
 * The head run's limit for `owner`: 0 unless its ticket is the oldest waiting; then the number of
 * the first other instance's ticket, or past the last ticket looked at (or issued).
 */
const runLimit = (queue: ReadonlyArray<{ readonly member: string }>, owner: string, lastTicket: number) => {
  if (queue.length === 0 || ownerOf(queue[0].member) !== owner) return 0
  const window = queue.slice(0, RUN_WINDOW)
  const other = window.find((t) => ownerOf(t.member) !== owner)
  if (other !== undefined) return Number.parseInt(other.member, 10)
  return window.length === RUN_WINDOW ? Number.parseInt(window[RUN_WINDOW - 1].member, 10) + 1 : lastTicket + 1
}

/** The nonce a member ends with: what an abandoned acquire is known by. */
const nonceOf = (member: string) => member.slice(member.lastIndexOf(":") + 1)

/** A member's lease TTL (ms). */
const ttlOf = (member: string) => Number(member.split(":")[2])

/** A sorted set's members and scores. */
const scored = async (redis: Redis, key: string) => {
  const flat = await redis.zrange(key, 0, -1, "WITHSCORES")
  const out: Array<{ readonly member: string; readonly score: number }> = []
  for (let i = 0; i < flat.length; i += 2) out.push({ member: flat[i], score: Number(flat[i + 1]) })
  return out
}

const check = async (redis: Redis, keys: ReadonlyArray<string>, model: Model, after: string) => {
  const [, meta, queue, wlease, held] = keys
  const [qs, ws, hs, m] = await Promise.all([
    scored(redis, queue),
    scored(redis, wlease),
    scored(redis, held),
    redis.hgetall(meta)
  ])
  const [q, w, h] = [qs, ws, hs].map((set) => set.map((e) => e.member))
  // the queue is scored by ticket number; a lease's deadline is its member's own TTL from the
  // script that set it (this run takes seconds: the two TTLs drawn are minutes apart)
  const now = Date.now()
  for (const e of qs) {
    if (e.score !== Number(e.member.split(":")[0])) fail(`after ${after}: ${e.member} queued with score ${e.score}`)
  }
  for (const e of [...ws, ...hs]) {
    const exact = model.deadlines.get(e.member)
    if (exact !== undefined) {
      if (e.score !== exact) fail(`after ${after}: ${e.member}'s deadline is ${e.score}, model ${exact}`)
      continue
    }
    const ttl = ttlOf(e.member)
    if (e.score > now + ttl + 1_000 || e.score < now + ttl - 60_000) {
      fail(`after ${after}: ${e.member}'s deadline is ${e.score - now} ms away, its TTL ${ttl} ms`)
    }
  }
  const expected = {
    queue: model.queue.map((t) => t.member),
    waitingLeases: [...model.queue.map((t) => t.member)].sort(),
    held: [...model.held.keys()].sort(),
    used: model.used,
    wanted: model.wanted,
    permits: model.permits
  }
  const actual = {
    queue: q,
    waitingLeases: [...w].sort(),
    held: [...h].sort(),
    used: Number(m.used ?? 0),
    wanted: Number(m.wanted ?? 0),
    permits: Number(m.permits ?? 0)
  }
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    fail(`after ${after}: Redis ${JSON.stringify(actual)}, model ${JSON.stringify(expected)}`)
  }
  // Redis against itself: the counters are the sums of its tickets' costs, and a head left queued does not fit
  const sum = (members: ReadonlyArray<string>) => members.reduce((total, member) => total + costOf(member), 0)
  if (sum(h) !== actual.used || sum(q) !== actual.wanted) {
    fail(`after ${after}: used ${actual.used} and wanted ${actual.wanted}, held ${h}, queued ${q}`)
  }
  if (q.length > 0 && actual.used + costOf(q[0]) <= actual.permits) {
    fail(`after ${after}: the head ${q[0]} fits (used ${actual.used} of ${actual.permits}) and was not granted`)
  }
}

describe("the Lua state machine", () => {
  it("matches the model over random sequences of steps", async () => {
    const redis = new Redis(url, { maxRetriesPerRequest: 1 })
    // what the scripts publish, by channel
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
          async (k, steps) => {
            const name = uniqueName("model")
            const { channel, keys } = keysOf("sluice:bh:", name)
            const run = (script: string, ...args: Array<string>) =>
              redis.eval(script, keys.length, ...keys, channel, String(k), ...args) as Promise<Array<unknown>>
            const model = new Model(k)
            const issued: Array<string> = []
            const pick = (n: number) => issued.length === 0 ? "0:none" : issued[n % issued.length]
            // a grant is published on its instance's channel, except a batch's grant of its caller's
            // ticket: one message per script and instance, the head run's limit first
            const expectedHeard = new Map<string, Array<string>>()
            const mine = `${channel}:${MINE}`
            const theirs = `${channel}:${THEIRS}`
            let stepGrants = new Map<string, Array<string>>()
            const published = (members: ReadonlyArray<string>) => {
              for (const member of members) {
                const owner = member.includes(`:${MINE}.`) ? MINE : THEIRS
                stepGrants.set(owner, [...(stepGrants.get(owner) ?? []), member])
              }
            }
            const lastTicket = async () => Number(await redis.get(keys[0]) ?? 0)
            const publishedAtFinish = async () => {
              for (const [owner, members] of stepGrants) {
                const to = `${channel}:${owner}`
                const limit = runLimit(model.queue, owner, await lastTicket())
                expectedHeard.set(to, [...(expectedHeard.get(to) ?? []), [limit, ...members].join(" ")])
              }
              stepGrants = new Map()
            }
            heard.clear()
            await subscriber.ssubscribe(mine, theirs)
            await run(scripts.resize)
            for (const [i, s] of steps.entries()) {
              const at = `step ${i} ${JSON.stringify(s)}`
              switch (s.kind) {
                case "batch": {
                  // a release names a member issued before this batch, as a caller can; a hand-over a
                  // holder issued before (or a stale id) and, when there is one, a waiter that costs
                  // no more (the client hands over to no other), or else any member issued
                  const targets = s.ops.map((o) =>
                    o.kind === "leave" ? pick(o.pick) : o.kind === "handOver" ? pick(o.from) : ""
                  )
                  const heirs = s.ops.map((o, j) => {
                    if (o.kind !== "handOver") return ""
                    const fits = model.queue.filter((t) => t.cost <= costOf(targets[j]))
                    return fits.length > 0 ? fits[o.to % fits.length].member : pick(o.to)
                  })
                  // a held lease past its deadline that no script has seen yet: the scripts expire
                  // dead leases only when they need to (an acquire that does not fit or finds a
                  // queue, a release with a queue, a leave keeping its grant)
                  const dead = new Set<string>()
                  if (s.expireFirst !== null && model.held.size > 0) {
                    const member = [...model.held.keys()][s.expireFirst % model.held.size]
                    await redis.zadd(keys[4], "XX", 1, member)
                    dead.add(member)
                  }
                  const expireDead = () => {
                    for (const member of dead) model.held.delete(member)
                    dead.clear()
                  }
                  const args = [MINE, s.ttl, String(s.maxWaiting)]
                  // the acquires given up on: their nonces, first in the batch as the client sends them
                  const abandoned = s.abandons.map((a, j) =>
                    a.fresh || issued.length === 0 ? `zz.${i}x${j}` : nonceOf(pick(a.pick))
                  )
                  for (const nonce of abandoned) args.push("a", nonce, "")
                  s.ops.forEach((o, j) => {
                    if (o.kind === "acquire") {
                      args.push(o.mayQueue ? "q" : "t", `${o.mine ? MINE : THEIRS}.${i}x${j}`, String(o.cost))
                    } else if (o.kind === "handOver") {
                      args.push("h", targets[j], heirs[j])
                    } else {
                      args.push(o.keep ? "k" : "r", targets[j], "")
                    }
                  })
                  const reply = await run(scripts.batch, ...args)
                  const first = abandoned.length + 2
                  if (reply.length !== s.ops.length + first) fail(`${at}: ${reply.length - 2} replies`)
                  const grantedMine: Array<string> = []
                  const grantsOf = (members: ReadonlyArray<string>) => {
                    grantedMine.push(...members.filter((member) => member.includes(`:${MINE}.`)))
                    published(members.filter((member) => !member.includes(`:${MINE}.`)))
                  }
                  // every abandon first, in one look: what its nonce holds ends (1), or waits for (2)
                  const abandonStates = new Map<string, number>()
                  for (const nonce of abandoned) {
                    if (abandonStates.has(nonce)) continue
                    const holder = [...model.held.keys()].find((member) => nonceOf(member) === nonce)
                    const waiter = model.queue.find((t) => nonceOf(t.member) === nonce)
                    if (holder !== undefined) {
                      model.held.delete(holder)
                      dead.delete(holder)
                    } else if (waiter !== undefined) {
                      model.queue = model.queue.filter((t) => t !== waiter)
                    }
                    abandonStates.set(nonce, holder !== undefined ? 1 : waiter !== undefined ? 2 : 0)
                  }
                  if ([...abandonStates.values()].some((state) => state > 0)) {
                    expireDead()
                    grantsOf(model.grant())
                  }
                  abandoned.forEach((nonce, j) => {
                    const answer = reply[j + 2] as Array<unknown>
                    const expected = [abandonStates.get(nonce), model.used, model.permits]
                    if (JSON.stringify(answer) !== JSON.stringify(expected)) {
                      fail(`${at} abandon ${nonce}: ${JSON.stringify(answer)}, model ${JSON.stringify(expected)}`)
                    }
                  })
                  s.ops.forEach((o, j) => {
                    const answer = reply[j + first] as Array<unknown>
                    const here = `${at} operation ${j}`
                    if (o.kind === "acquire") {
                      if (model.wanted > 0 || model.used + o.cost > model.permits) {
                        expireDead()
                        grantsOf(model.grant())
                      }
                      const kind = Number(answer[0])
                      const member = String(answer[1])
                      const ahead = model.queue.length
                      const expected = ahead === 0 && model.used + o.cost <= model.permits
                        ? 1
                        : s.maxWaiting >= 0 && ahead >= s.maxWaiting
                        ? 2
                        : o.mayQueue
                        ? 0
                        : 3
                      if (kind !== expected) fail(`${here}: kind ${kind}, model ${expected}`)
                      if (Number(answer[4]) !== ahead) fail(`${here}: ${answer[4]} ahead, model ${ahead}`)
                      if (kind === 0 || kind === 1) {
                        // the cost and the TTL travel in the member
                        if (!member.endsWith(`:${o.cost}:${s.ttl}:${o.mine ? MINE : THEIRS}.${i}x${j}`)) {
                          fail(`${here}: member ${member}`)
                        }
                        issued.push(member)
                      }
                      if (kind === 1) model.held.set(member, o.cost)
                      if (kind === 0) model.queue.push({ member, cost: o.cost })
                      if (model.grant().length > 0) fail(`${here}: the model grants after an acquire, Redis did not`)
                    } else if (o.kind === "handOver") {
                      const [from, to] = [targets[j], heirs[j]]
                      // the holder's lease ends (a dead one not expired yet included), the heir's begins
                      const had = model.held.delete(from)
                      dead.delete(from)
                      // a hand-over counts the heir with a lease of its own TTL from now
                      model.deadlines.delete(to)
                      let state = 0
                      if (model.queue.some((t) => t.member === to)) {
                        model.queue = model.queue.filter((t) => t.member !== to)
                        // no holder's permits to take: the heir is claimed, after the queue's grants
                        if (!had) {
                          expireDead()
                          grantsOf(model.grant())
                        }
                        // and never past K (a shrink)
                        if (model.used + costOf(to) <= model.permits) {
                          model.held.set(to, costOf(to))
                          state = 1
                        }
                      } else if (/^[^:]*:\d+:\d+:/.test(to)) {
                        // a dead lease ends first: never renewed
                        expireDead()
                        if (model.held.has(to)) {
                          // granted meanwhile: its lease renewed from now
                          state = 1
                        } else if (!had) {
                          // neither there (a Redis that lost both): the heir is claimed, after the queue's grants
                          grantsOf(model.grant())
                          if (model.used + costOf(to) <= model.permits) {
                            model.held.set(to, costOf(to))
                            state = 1
                          }
                        }
                      }
                      if (Number(answer[0]) !== state) fail(`${here}: state ${answer[0]}, model ${state}`)
                      if (model.wanted > 0) {
                        expireDead()
                        grantsOf(model.grant())
                      }
                    } else {
                      if (o.keep || model.wanted > 0) expireDead()
                      const member = targets[j]
                      const state = model.held.has(member) ? 1 : model.queue.some((t) => t.member === member) ? 2 : 0
                      if (Number(answer[0]) !== state) fail(`${here}: state ${answer[0]}, model ${state}`)
                      if (state === 1 && !o.keep) {
                        // a holder may release a lease past its deadline that no script has expired yet
                        model.held.delete(member)
                        dead.delete(member)
                      }
                      if (state === 2) model.queue = model.queue.filter((t) => t.member !== member)
                      grantsOf(model.grant())
                    }
                    // used: third in an acquire's reply, second in a release's
                    if (Number(answer[o.kind === "acquire" ? 2 : 1]) !== model.used) {
                      fail(`${here}: used ${JSON.stringify(answer)}, model ${model.used}`)
                    }
                  })
                  // the caller's grants come back, in the order made, with its head run's limit; the
                  // others' are published
                  if (JSON.stringify(reply[0]) !== JSON.stringify(grantedMine)) {
                    fail(`${at}: grants returned ${JSON.stringify(reply[0])}, model ${JSON.stringify(grantedMine)}`)
                  }
                  const limit = runLimit(model.queue, MINE, await lastTicket())
                  if (Number(reply[1]) !== limit) fail(`${at}: head run's limit ${reply[1]}, model ${limit}`)
                  // what the limit promises: every ticket waiting below it is the caller's
                  const queuedNow = await redis.zrange(keys[2], 0, -1)
                  const foreign = queuedNow.find((m) => Number.parseInt(m, 10) < limit && !m.includes(`:${MINE}.`))
                  if (foreign !== undefined) fail(`${at}: ${foreign} waits below the caller's limit ${limit}`)
                  await publishedAtFinish()
                  if (dead.size > 0) {
                    // no operation looked: Redis still counts the dead lease, as the model does
                    const held = await redis.zrange(keys[4], 0, -1)
                    if (!held.includes([...dead][0])) fail(`${at}: the dead lease was expired, no operation needed it`)
                    await run(scripts.stats)
                    expireDead()
                    published(model.grant())
                  }
                  break
                }
                case "renew": {
                  const member = pick(s.pick)
                  model.deadlines.delete(member)
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
                  published(model.grant())
                  break
                }
                case "ageWaiting": {
                  if (model.queue.length === 0) break
                  const member = model.queue[s.pick % model.queue.length].member
                  const deadline = Date.now() + s.leftMillis
                  await redis.zadd(keys[3], "XX", deadline, member)
                  model.deadlines.set(member, deadline)
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
                  published(model.grant())
                  const triples = s.members.map((m, j) => {
                    if (m.fresh || issued.length === 0) {
                      const member = `c:${m.cost}:${TTL}:fb.${i}x${j}`
                      issued.push(member)
                      return { member, cost: m.cost }
                    }
                    const member = issued[m.pick % issued.length]
                    return { member, cost: costOf(member) }
                  })
                  // a renewal or a claim counts a fresh TTL from now
                  for (const t of triples) model.deadlines.delete(t.member)
                  const reply = await run(scripts.claim, ...triples.map((t) => t.member))
                  const expected = triples.map(({ cost, member }) => {
                    if (model.held.has(member)) return "h"
                    // a waiting ticket is never claimed (its grant would count it twice): it leaves the queue
                    if (model.queue.some((t) => t.member === member)) {
                      model.queue = model.queue.filter((t) => t.member !== member)
                      published(model.grant())
                      return "x"
                    }
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
                  published(model.grant())
                  break
                }
              }
              // every script publishes at its end: the stats of a dead lease's batch too
              await publishedAtFinish()
              await check(redis, keys, model, at)
            }
            // every message published has come once a PING sent after them is answered
            await subscriber.call("PING")
            await subscriber.sunsubscribe(mine, theirs)
            for (const to of [mine, theirs]) {
              const got = JSON.stringify(heard.get(to) ?? [])
              const want = JSON.stringify(expectedHeard.get(to) ?? [])
              if (got !== want) fail(`published on ${to}: ${got}, model ${want}`)
            }
            await redis.del(...keys)
          }
        ),
        {
          numRuns: 60,
          examples: [
            // found in CI: a hand-over to a waiter an abandon had just granted left the heir's lease
            // at its waiting lease's deadline, while its instance counts it from the script
            [1, [
              { kind: "claim", expireFirst: null, members: [{ pick: 0, fresh: false, cost: 1 }] },
              {
                kind: "batch",
                maxWaiting: 1,
                ttl: "600000",
                expireFirst: null,
                abandons: [],
                ops: [{ kind: "acquire", cost: 1, mayQueue: true, mine: false }]
              },
              { kind: "ageWaiting", pick: 0, leftMillis: 60000 },
              {
                kind: "batch",
                maxWaiting: 0,
                ttl: "600000",
                expireFirst: null,
                abandons: [{ pick: 0, fresh: false }],
                ops: [{ kind: "handOver", from: 0, to: 0 }, { kind: "leave", pick: 0, keep: false }]
              }
            ]],
            // and a hand-over to a holder whose lease had just ended must not bring it back
            [2, [
              {
                kind: "claim",
                expireFirst: 0,
                members: [{ pick: 0, fresh: false, cost: 1 }, { pick: 0, fresh: true, cost: 1 }]
              },
              {
                kind: "batch",
                maxWaiting: 0,
                ttl: "600000",
                expireFirst: 1,
                abandons: [],
                ops: [{ kind: "handOver", from: 0, to: 1 }]
              },
              { kind: "expireHeld", pick: 0 }
            ]]
          ]
        }
      )
    } finally {
      await redis.quit()
      await subscriber.quit()
    }
  }, 120_000)

  it("a queued member these scripts did not write is dropped at the head, not granted, and stops nothing", async () => {
    const redis = new Redis(url, { maxRetriesPerRequest: 1 })
    try {
      const { channel, keys } = keysOf("sluice:bh:", uniqueName("foreign"))
      const run = (...args: Array<string>) =>
        redis.eval(scripts.batch, keys.length, ...keys, channel, "1", MINE, TTL, "-1", ...args) as Promise<
          Array<Array<unknown>>
        >
      const [, , held] = await run("q", `${MINE}.1`, "1")
      const [, , queued] = await run("q", `${MINE}.2`, "1")
      assert.deepStrictEqual([held[0], queued[0]], [1, 0])
      // ahead of the queued ticket: a member without a cost and a TTL (another version's, a typo)
      await redis.zadd(keys[2], 0, "0:foreign")
      await redis.zadd(keys[3], Date.now() + 600_000, "0:foreign")
      const [grants, , released] = await run("r", String(held[1]), "")
      assert.deepStrictEqual([released[0], grants], [1, [queued[1]]])
      assert.deepStrictEqual(await redis.zrange(keys[2], 0, -1), [])
      assert.deepStrictEqual(await redis.zrange(keys[3], 0, -1), [])
      assert.deepStrictEqual(await redis.hmget(keys[1], "used", "wanted"), ["1", "0"])
    } finally {
      await redis.quit()
    }
  })

  it("a waiting ticket is never claimed (its grant would count its permits a second time): it leaves the queue", async () => {
    const redis = new Redis(url, { maxRetriesPerRequest: 1 })
    try {
      const { channel, keys } = keysOf("sluice:bh:", uniqueName("claim-queued"))
      const run = (script: string, ...args: Array<string>) =>
        redis.eval(script, keys.length, ...keys, channel, "3", ...args) as Promise<Array<unknown>>
      const replies = await run(scripts.batch, MINE, TTL, "-1", "q", "a.1", "2", "q", "a.2", "3", "q", "a.3", "1")
      const [held, head, behind] = replies.slice(2) as Array<Array<unknown>>
      assert.deepStrictEqual([held[0], head[0], behind[0]], [1, 0, 0])
      const claimed = await run(scripts.claim, String(behind[1]))
      assert.strictEqual(claimed[1], "x")
      assert.deepStrictEqual(await redis.hmget(keys[1], "used", "wanted"), ["2", "3"])
      assert.deepStrictEqual(await redis.zrange(keys[2], 0, -1), [String(head[1])])
      assert.deepStrictEqual(await redis.zrange(keys[3], 0, -1), [String(head[1])])
    } finally {
      await redis.quit()
    }
  })
})
