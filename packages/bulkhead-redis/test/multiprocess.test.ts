/**
 * Node processes sharing K permits through Redis, against a loopback HTTP server that counts the
 * requests in flight from the first request byte to the last response byte. Real time throughout;
 * the only wall-time assertion is the documented lease bound (a killed holder's permits come back
 * within the lease TTL + 1 s).
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { Redis } from "ioredis"
import { inject } from "vitest"
import { RedisBulkhead } from "../src/index.js"
import { type Child, worker } from "./utils/child.js"
import { countingServer } from "./utils/countingServer.js"
import { bulkheadOn, eventually, expectClean, hold, inspector, stateOf, uniqueName } from "./utils/helpers.js"

const url = inject("redisUrl")

// one at a time: each starts node processes, and a loaded machine would stretch the lease bound under test
describe.sequential("several processes", () => {
  it.scopedLive(
    "three processes sharing K = 4: the server never sees more than 4 requests at once",
    () =>
      Effect.gen(function*() {
        const name = uniqueName("fleet")
        const { counts, port } = yield* countingServer
        const children = yield* Effect.forEach(
          [0, 1, 2],
          () => worker({ url, name, permits: 4, leaseTtlMillis: 3000, mode: "calls", port, calls: 8, concurrency: 6 })
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

  it.scopedLive(
    "strict FIFO across four processes from the grant log: every grant in ticket order, heavy heads not overtaken; " +
      "a killed waiter process loses its place and nobody waits for it",
    () =>
      Effect.gen(function*() {
        const name = uniqueName("fifo-log")
        const ttl = 1500
        const redis = yield* inspector(url)
        const { channel } = RedisBulkhead.keysOf("sluice:bh:", name)
        const mine = yield* bulkheadOn(url, { name, permits: 3, leaseTtl: ttl })
        const gate = yield* hold(mine, { cost: 3 })
        yield* Deferred.await(gate.started)
        const children: Array<Child> = yield* Effect.forEach(
          [0, 1, 2, 3],
          () => worker({ url, name, permits: 3, leaseTtlMillis: ttl, mode: "queue", holdMillis: 15 })
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
        // a member is `<ticket>:<mark>.<n>`, and each process's grants go to `<channel>:<mark>`
        const markOf = (member: string) => member.slice(member.indexOf(":") + 1, member.indexOf("."))
        const marks = new Set([...owner.keys()].map(markOf))
        assert.strictEqual(marks.size, 4, "one mark per process")
        // the grant log: every grant of a queued ticket is one SPUBLISH, in the order the scripts ran
        // (one subscriber connection for the four channels: the server's order)
        const published: Array<string> = []
        const misdelivered: Array<string> = []
        yield* Effect.acquireRelease(
          Effect.promise(async () => {
            const subscriber = new Redis(url)
            subscriber.on("smessage", (to: string, message: string) => {
              for (const member of message.split(" ")) {
                published.push(member)
                if (to !== `${channel}:${markOf(member)}`) misdelivered.push(`${member} on ${to}`)
              }
            })
            await subscriber.ssubscribe(...[...marks].map((mark) => `${channel}:${mark}`))
            return subscriber
          }),
          (subscriber) => Effect.promise(() => subscriber.quit())
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
        // the log: (ticket, process, grant order)
        const log = published.map((member, order) => ({ ticket: ticketOf(member), ...owner.get(member), order }))
        const tickets = log.map((entry) => entry.ticket)
        assert.deepStrictEqual(
          tickets,
          [...tickets].sort((x, y) => x - y),
          `grants out of ticket order: ${JSON.stringify(log)}`
        )
        assert.deepStrictEqual(
          new Set(published),
          new Set(live.map(([member]) => member)),
          "every live ticket granted once, no dead one"
        )
        assert.strictEqual(published.length, 12)
        assert.deepStrictEqual(misdelivered, [], "each grant on the channel of the process it went to, and only there")
        yield* expectClean(redis, name)
      }),
    { timeout: 120_000 }
  )

  it.scopedLive(
    "a holder killed with SIGKILL gives its permits back within the lease TTL + 1 s",
    () =>
      Effect.gen(function*() {
        const name = uniqueName("sigkill")
        const ttl = 2000
        const holder = yield* worker({ url, name, permits: 2, leaseTtlMillis: ttl, mode: "hold", cost: 2 })
        yield* holder.lineMatching((l) => l === "holding", "holding")
        const mine = yield* bulkheadOn(url, { name, permits: 2, leaseTtl: ttl })
        const waiter = yield* hold(mine, { cost: 2 })
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

  it.scopedLive(
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

  it.scopedLive(
    "a waiter process killed loses its place within the lease TTL, and nobody waits for it",
    () =>
      Effect.gen(function*() {
        const name = uniqueName("deadwaiter")
        const ttl = 1500
        const redis = yield* inspector(url)
        const mine = yield* bulkheadOn(url, { name, permits: 1, leaseTtl: ttl })
        const holder = yield* hold(mine)
        yield* Deferred.await(holder.started)
        const child = yield* worker({ url, name, permits: 1, leaseTtlMillis: ttl, mode: "hold" })
        yield* eventually(Effect.map(mine.stats, (s) => s.waiting === 1), "the child's ticket queued")
        const [dead] = (yield* stateOf(redis, name)).queue
        const behind = yield* hold(mine)
        yield* eventually(Effect.map(mine.stats, (s) => s.waiting === 2), "a ticket behind it")
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
