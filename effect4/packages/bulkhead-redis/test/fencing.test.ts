/**
 * The three faults of the fleet's leases that a kill, a pause or a stall can cause, each injected:
 * a waiter process killed before its grant (the grant must not outlive its waiting lease), a
 * waiter process paused past its lease (it must not start a call on the grant it reads on waking),
 * and acquires whose commands timed out while Redis was paused (they must not keep permits once
 * Redis answers). Real processes, a real redis-server, wall time: the bounds asserted are the
 * documented ones (TTL + 1 s after a death, 1 s after Redis answers).
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Result } from "effect"
import { inject } from "vitest"
import {
  bulkheadOn,
  eventually,
  expectClean,
  hold,
  inspector,
  ownServer,
  stateOf,
  uniqueName
} from "./utils/helpers.js"
import { childQueuedBetween } from "./utils/queuedChild.js"

const url = inject("redisUrl")

describe("fencing", { concurrent: false }, () => {
  it.live(
    "a waiter process killed before its grant: the grant ends with its waiting lease, the ticket behind starts within TTL + 1 s",
    () =>
      Effect.gen(function*() {
        const name = uniqueName("dead-grant")
        const ttl = 3000
        const { behind, child, childTicket: dead, holder, redis } = yield* childQueuedBetween(url, name, ttl)
        const killedAt = Date.now()
        child.proc.kill("SIGKILL")
        // half a TTL later the dead waiter's lease (renewed every third) is still on: the release grants it
        yield* Effect.sleep(ttl / 2)
        assert.include((yield* stateOf(redis, name)).queue, dead)
        yield* Deferred.succeed(holder.finish, undefined)
        yield* Fiber.join(holder.fiber)
        yield* Deferred.await(behind.started)
        const after = Date.now() - killedAt
        assert.isAtMost(after, ttl + 1000, `the ticket behind the dead waiter started ${after} ms after the kill`)
        yield* Deferred.succeed(behind.finish, undefined)
        yield* Fiber.join(behind.fiber)
        yield* expectClean(redis, name)
      }),
    { timeout: 60_000 }
  )

  it.live(
    "a waiter process paused past its lease starts no call on the grant it reads on waking: it queues again",
    () =>
      Effect.gen(function*() {
        const name = uniqueName("stale-grant")
        const ttl = 1500
        const { behind, child, holder, mine, redis } = yield* childQueuedBetween(url, name, ttl)
        child.proc.kill("SIGSTOP")
        // the release grants the stopped child's ticket; its lease ends and the permit passes on
        yield* Deferred.succeed(holder.finish, undefined)
        yield* Deferred.await(behind.started)
        const from = child.received()
        child.proc.kill("SIGCONT")
        // on waking it reads the old grant (or finds its lease gone first): either way it queues again
        const first = yield* child.lineMatching(
          (l) => l === "holding" || l.includes("queues again"),
          "the child's decision",
          from
        )
        assert.notStrictEqual(first, "holding", "the paused child started its call on a grant whose lease had ended")
        yield* eventually(Effect.map(mine.stats, (s) => s.waiting === 1), "the child's call queued again")
        const state = yield* stateOf(redis, name)
        assert.deepStrictEqual({ held: state.held.length, used: state.used }, { held: 1, used: 1 })
        // it runs once this process's call is done, not before
        const before = child.received()
        yield* Deferred.succeed(behind.finish, undefined)
        yield* Fiber.join(behind.fiber)
        yield* child.lineMatching((l) => l === "holding", "the child's call running", before)
        yield* child.send("finish")
        yield* child.lineMatching((l) => l === "released", "released")
        yield* expectClean(redis, name)
      }),
    { timeout: 60_000 }
  )

  it.live(
    "acquires that timed out while Redis was paused hold nothing once it answers: full K within 1 s (fail-closed)",
    () =>
      Effect.gen(function*() {
        const server = yield* ownServer()
        const name = uniqueName("stall")
        const permits = 2
        const [redis, probe] = [yield* inspector(server.url), yield* inspector(server.url)]
        const bulkhead = yield* bulkheadOn(server.url, { name, permits, leaseTtl: 5000 })
        // Redis has the scripts (a first EVALSHA would fail with NOSCRIPT after the pause, and run nothing)
        yield* bulkhead.run(Effect.void)
        yield* Effect.promise(() => redis.call("CLIENT", "PAUSE", "1500", "ALL"))
        const back = yield* Effect.forkChild(Effect.promise(() => probe.ping().then(() => Date.now())))
        // K calls ask while Redis is paused: their commands time out (500 ms), their scripts run later
        const asked = yield* Effect.all(
          Array.from({ length: permits }, () => Effect.result(bulkhead.run(Effect.void))),
          { concurrency: "unbounded" }
        )
        for (const answer of asked) {
          assert.isTrue(Result.isFailure(answer) && answer.failure._tag === "BulkheadStoreError", String(answer))
        }
        const answeredAt = yield* Fiber.join(back)
        const calls = yield* Effect.forEach(Array.from({ length: permits }), () => hold(bulkhead))
        yield* Effect.forEach(calls, (call) => Deferred.await(call.started), { discard: true })
        const after = Date.now() - answeredAt
        assert.isAtMost(after, 1000, `K calls running ${after} ms after Redis answered again`)
        yield* Effect.forEach(calls, (call) => Deferred.succeed(call.finish, undefined), { discard: true })
        yield* Effect.forEach(calls, (call) => Fiber.join(call.fiber), { discard: true })
        yield* eventually(Effect.map(stateOf(redis, name), (s) => s.used === 0), "every permit back")
        yield* expectClean(redis, name)
      }),
    { timeout: 60_000 }
  )
})
