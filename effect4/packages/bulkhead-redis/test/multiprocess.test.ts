/**
 * Node processes sharing K permits through Redis (some of them on the Effect 3 line: both lines run
 * the same scripts on the same keys), against a loopback HTTP server that counts the
 * requests in flight from the first request byte to the last response byte. Real time throughout;
 * the only wall-time assertion is the documented lease bound (a killed holder's permits come back
 * within the lease TTL + 1 s).
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { Redis } from "ioredis"
import { inject } from "vitest"
import { RedisBulkhead } from "../src/index.js"
import { type Child, effect3Worker, worker } from "./utils/child.js"
import { countingServer } from "./utils/countingServer.js"
import { bulkheadOn, eventually, expectClean, hold, inspector, stateOf, uniqueName } from "./utils/helpers.js"
import { childQueuedBetween } from "./utils/queuedChild.js"

const url = inject("redisUrl")

// one at a time: each starts node processes, and a loaded machine would stretch the lease bound under test
describe("several processes", { concurrent: false }, () => {
  it.live(
    "three processes sharing K = 4, one of them on Effect 3: the server never sees more than 4 requests at once",
    () =>
      Effect.gen(function*() {
        const name = uniqueName("fleet")
        const { counts, port } = yield* countingServer
        const children = yield* Effect.forEach(
          [worker, worker, effect3Worker],
          (spawn) =>
            spawn({ url, name, permits: 4, leaseTtlMillis: 3000, mode: "calls", port, calls: 8, concurrency: 6 })
        )
        yield* Effect.forEach(children, (c) => c.lineMatching((l) => l === "ready", "ready"), { discard: true })
        yield* Effect.forEach(children, (c) => c.send("go"), { discard: true })
        const reports = yield* Effect.forEach(children, (c) => c.lineMatching((l) => l.startsWith("{"), "its report"))
        for (const report of reports) assert.deepStrictEqual(JSON.parse(report), { done: 48, errors: 0 })
        assert.strictEqual(counts.total, 144)
        assert.isAtMost(counts.peak, 4)
        assert.isAtLeast(counts.peak, 2)
        yield* expectClean(yield* inspector(url), name)
      }),
    { timeout: 120_000 }
  )

  it.live(
    "strict FIFO across four processes, two on each line, from the grant log: every grant in ticket order, heavy " +
      "heads not overtaken; a killed waiter process loses its place and nobody waits for it",
    () =>
      Effect.gen(function*() {
        const name = uniqueName("fifo-log")
        const ttl = 1500
        const redis = yield* inspector(url)
        const { channel } = RedisBulkhead.keysOf("sluice:bh:", name)
        const mine = yield* bulkheadOn(url, { name, permits: 3, leaseTtl: ttl })
        const gate = yield* hold(mine, { permits: 3 })
        yield* Deferred.await(gate.started)
        const children: Array<Child> = yield* Effect.forEach(
          [worker, effect3Worker, worker, effect3Worker],
          (spawn) => spawn({ url, name, permits: 3, leaseTtlMillis: ttl, mode: "queue", holdMillis: 15 })
        )
        yield* Effect.forEach(children, (c) => c.lineMatching((l) => l === "ready", "ready"), { discard: true })
        // 16 tickets, round robin over the processes, costs 1, 2, 3, 1, ...: each asked once the one before queued
        const owner = new Map<string, { readonly child: number; readonly id: string; readonly cost: number }>()
        for (let i = 0; i < 16; i++) {
          const child = i % 4
          const cost = (i % 3) + 1
          yield* children[child].send(`ask t${i} ${cost}`)
          yield* eventually(Effect.map(stateOf(redis, name), (s) => s.queue.length === i + 1), `ticket ${i} queued`)
          const queue = (yield* stateOf(redis, name)).queue
          owner.set(queue[queue.length - 1], { child, id: `t${i}`, cost })
        }
        const ticketOf = (member: string) => Number(member.slice(0, member.indexOf(":")))
        // a member is `<ticket>:<cost>:<ttl>:<mark>.<n>`, and each instance's grants go to `<channel>:<mark>`
        const markOf = (member: string) => {
          const nonce = member.slice(member.lastIndexOf(":") + 1)
          return nonce.slice(0, nonce.indexOf("."))
        }
        const marks = new Set([...owner.keys()].map(markOf))
        assert.strictEqual(marks.size, 4, "one mark per process")
        // the grant log: every grant is a ZADD to the held set made by a script, which MONITOR shows in
        // the order the server ran them; a grant to another process is also published on its channel
        const { keys } = RedisBulkhead.keysOf("sluice:bh:", name)
        const granted: Array<string> = []
        const published: Array<string> = []
        const misdelivered: Array<string> = []
        yield* Effect.acquireRelease(
          Effect.promise(async () => {
            const base = new Redis(url)
            const monitor = await base.monitor()
            monitor.on("monitor", (_time: string, args: Array<string>, source: string) => {
              const command = args[0]?.toLowerCase()
              if (source !== "lua") return
              // a grant: ZADD held <deadline> <member> (a renewal adds with XX)
              if (command === "zadd" && args[1] === keys[4] && args.length === 4) granted.push(args[3])
              if (command === "spublish") {
                // the limit of the process's head run, then the members granted
                for (const member of args[2].split(" ").slice(1)) {
                  published.push(member)
                  if (args[1] !== `${channel}:${markOf(member)}`) misdelivered.push(`${member} on ${args[1]}`)
                }
              }
            })
            return { base, monitor }
          }),
          ({ base, monitor }) =>
            Effect.promise(async () => {
              monitor.disconnect()
              await base.quit()
            })
        )
        // the last process dies with four tickets queued: they leave the queue when their waiting leases end
        const dead = [...owner].filter(([, o]) => o.child === 3).map(([member]) => member)
        children[3].proc.kill("SIGKILL")
        yield* eventually(
          Effect.map(stateOf(redis, name), (s) => s.queue.length === 12 && dead.every((m) => !s.queue.includes(m))),
          "the dead process's tickets gone"
        )
        yield* Deferred.succeed(gate.finish, undefined)
        yield* Fiber.join(gate.fiber)
        const live = [...owner].filter(([, o]) => o.child !== 3)
        yield* Effect.forEach(
          live,
          ([, o]) => children[o.child].lineMatching((l) => l === `done ${o.id}`, `done ${o.id}`),
          { discard: true }
        )
        // MONITOR's lines trail the commands a little
        yield* eventually(Effect.sync(() => granted.length >= 12), "12 grants in the log")
        // the log: (ticket, process, grant order)
        const log = granted.map((member, order) => ({ ticket: ticketOf(member), ...owner.get(member), order }))
        const tickets = log.map((entry) => entry.ticket)
        assert.deepStrictEqual(
          tickets,
          [...tickets].sort((x, y) => x - y),
          `grants out of ticket order: ${JSON.stringify(log)}`
        )
        assert.deepStrictEqual(
          new Set(granted),
          new Set(live.map(([member]) => member)),
          "every live ticket granted once, no dead one"
        )
        assert.strictEqual(granted.length, 12)
        // the first grants go from this process to the others, by message; a process's grants of its
        // own tickets come back in its script's reply instead
        assert.isAtLeast(published.length, 1)
        assert.isTrue(published.every((member) => granted.includes(member)), "only grants are published")
        assert.deepStrictEqual(misdelivered, [], "each grant on the channel of the process it went to, and only there")
        yield* expectClean(redis, name)
      }),
    { timeout: 120_000 }
  )

  it.live(
    "a holder killed with SIGKILL gives its permits back within the lease TTL + 1 s",
    () =>
      Effect.gen(function*() {
        const name = uniqueName("sigkill")
        const ttl = 2000
        const holder = yield* worker({ url, name, permits: 2, leaseTtlMillis: ttl, mode: "hold", cost: 2 })
        yield* holder.lineMatching((l) => l === "holding", "holding")
        const mine = yield* bulkheadOn(url, { name, permits: 2, leaseTtl: ttl })
        const waiter = yield* hold(mine, { permits: 2 })
        yield* eventually(Effect.map(mine.stats, (s) => s.waiting === 1), "waiter queued")
        const killedAt = Date.now()
        holder.proc.kill("SIGKILL")
        yield* Deferred.await(waiter.started)
        const after = Date.now() - killedAt
        assert.isAtMost(after, ttl + 1000, `the permits came back ${after} ms after the kill`)
        yield* Deferred.succeed(waiter.finish, undefined)
        yield* Fiber.join(waiter.fiber)
        yield* expectClean(yield* inspector(url), name)
      }),
    { timeout: 60_000 }
  )

  it.live(
    "a holder paused past its lease (SIGSTOP) learns it lost it, and its release frees nothing",
    () =>
      Effect.gen(function*() {
        const name = uniqueName("sigstop")
        const redis = yield* inspector(url)
        const holder = yield* worker({ url, name, permits: 1, leaseTtlMillis: 900, mode: "hold" })
        yield* holder.lineMatching((l) => l === "holding", "holding")
        const mine = yield* bulkheadOn(url, { name, permits: 1, leaseTtl: 900 })
        const waiter = yield* hold(mine)
        yield* eventually(Effect.map(mine.stats, (s) => s.waiting === 1), "waiter queued")
        holder.proc.kill("SIGSTOP")
        yield* Deferred.await(waiter.started)
        const [member] = (yield* stateOf(redis, name)).held
        holder.proc.kill("SIGCONT")
        yield* holder.lineMatching((l) => l.includes("was lost"), "the lost lease logged")
        yield* holder.send("finish")
        yield* holder.lineMatching((l) => l === "released", "released")
        const state = yield* stateOf(redis, name)
        assert.deepStrictEqual({ held: state.held, used: state.used }, { held: [member], used: 1 })
        yield* Deferred.succeed(waiter.finish, undefined)
        yield* Fiber.join(waiter.fiber)
        yield* expectClean(redis, name)
      }),
    { timeout: 60_000 }
  )

  it.live(
    "a holder paused past its lease hands nothing over: its process's waiter, whose lease ended too, queues again",
    () =>
      Effect.gen(function*() {
        const name = uniqueName("sigstop-heir")
        const redis = yield* inspector(url)
        // the child holds the permit, and its second call waits behind it: the oldest waiter
        const child = yield* worker({ url, name, permits: 1, leaseTtlMillis: 900, mode: "hold", second: true })
        yield* child.lineMatching((l) => l === "holding", "holding")
        const mine = yield* bulkheadOn(url, { name, permits: 1, leaseTtl: 900 })
        yield* eventually(Effect.map(mine.stats, (s) => s.waiting === 1), "the child's second call queued")
        const waiter = yield* hold(mine)
        yield* eventually(Effect.map(mine.stats, (s) => s.waiting === 2), "this process's waiter queued")
        child.proc.kill("SIGSTOP")
        // both of the child's leases end; the permit passes to this process's waiter
        yield* Deferred.await(waiter.started)
        // the child ends its call as soon as it runs again, before its renewal can answer
        yield* child.send("finish")
        child.proc.kill("SIGCONT")
        yield* child.lineMatching((l) => l === "released", "released")
        // the child's second call was not handed the permit it no longer had: it queues again
        yield* eventually(Effect.map(mine.stats, (s) => s.waiting === 1), "the child's second call queued again")
        const state = yield* stateOf(redis, name)
        assert.deepStrictEqual({ held: state.held.length, used: state.used }, { held: 1, used: 1 })
        // it runs once this process's waiter is done, not before: its line comes after this point
        const before = child.received()
        yield* Deferred.succeed(waiter.finish, undefined)
        yield* Fiber.join(waiter.fiber)
        yield* child.lineMatching((l) => l === "second running", "the second call running", before)
      }),
    { timeout: 60_000 }
  )

  it.live(
    "a waiter process killed loses its place within the lease TTL, and nobody waits for it",
    () =>
      Effect.gen(function*() {
        const name = uniqueName("deadwaiter")
        const ttl = 1500
        const { behind, child, childTicket: dead, holder, redis } = yield* childQueuedBetween(url, name, ttl)
        const killedAt = Date.now()
        child.proc.kill("SIGKILL")
        // the dead waiter's ticket leaves the queue when its lease ends; the one behind keeps its place
        yield* eventually(
          Effect.map(stateOf(redis, name), (state) => state.queue.length === 1 && !state.queue.includes(dead)),
          "the dead waiter's ticket gone"
        )
        const after = Date.now() - killedAt
        assert.isAtMost(after, ttl + 1000, `the dead waiter left the queue ${after} ms after the kill`)
        yield* Deferred.succeed(holder.finish, undefined)
        yield* Deferred.await(behind.started)
        assert.notInclude((yield* stateOf(redis, name)).held, dead)
        yield* Deferred.succeed(behind.finish, undefined)
        yield* Fiber.join(behind.fiber)
        yield* expectClean(redis, name)
      }),
    { timeout: 60_000 }
  )
})
