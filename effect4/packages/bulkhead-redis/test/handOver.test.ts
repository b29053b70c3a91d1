/**
 * The hand-over: a release gives its permits straight to the instance's oldest waiter when that
 * waiter is the fleet's oldest (the head run is the instance's), with no round trip before the
 * waiter runs; Redis hears of it in the instance's next script. Each test shows the permit reach
 * its heir while Redis is paused (`CLIENT PAUSE`, on a server of the test's own), or not reach a
 * waiter that is not the fleet's oldest, and what Redis holds afterwards.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import type { Redis } from "ioredis"
import { RedisBulkhead } from "../src/index.js"
import {
  bulkheadOn,
  capturingLogs,
  eventually,
  expectClean,
  hold,
  inspector,
  lostCount,
  ownServer,
  stateOf,
  uniqueName,
  waitingIs
} from "./utils/helpers.js"

/**
 * Pauses every client of `redis`'s server for `millis` (shorter than the connection's command
 * timeout, 500 ms, so that the scripts sent meanwhile are answered, not timed out); the fiber
 * returned logs once a command sent meanwhile is answered.
 */
const pause = (redis: Redis, probe: Redis, millis: number, log: Array<string>) =>
  Effect.gen(function*() {
    yield* Effect.promise(() => redis.call("CLIENT", "PAUSE", String(millis), "ALL"))
    const back = yield* Effect.forkChild(Effect.promise(() => probe.ping().then(() => log.push("redis answers"))))
    return back
  })

describe("hand-over", () => {
  it.live("a release hands its permit to the instance's oldest waiter with Redis paused; Redis hears of it next", () =>
    Effect.gen(function*() {
      const server = yield* ownServer()
      const name = uniqueName("handover")
      const [redis, probe] = [yield* inspector(server.url), yield* inspector(server.url)]
      const a = yield* bulkheadOn(server.url, { name, permits: 1 })
      const log: Array<string> = []
      const first = yield* hold(a, undefined, log, "first")
      yield* Deferred.await(first.started)
      const second = yield* hold(a, undefined, log, "second")
      const third = yield* hold(a, undefined, log, "third")
      yield* eventually(waitingIs(a, 2), "two waiters queued")
      const before = yield* stateOf(redis, name)
      const back = yield* pause(redis, probe, 300, log)
      // the release's hand-over reaches the heir now; its script waits for the pause to end
      yield* Deferred.succeed(first.finish, undefined)
      yield* Deferred.await(second.started)
      yield* Fiber.join(back)
      assert.deepStrictEqual(log, ["first", "second", "redis answers"])
      // Redis heard it: the heir's lease replaced the holder's, the third still waits
      yield* Fiber.join(first.fiber)
      const after = yield* stateOf(redis, name)
      assert.deepStrictEqual(
        { held: after.held, queue: after.queue, used: after.used, wanted: after.wanted },
        { held: [before.queue[0]], queue: [before.queue[1]], used: 1, wanted: 1 }
      )
      yield* Deferred.succeed(second.finish, undefined)
      yield* Deferred.await(third.started)
      yield* Deferred.succeed(third.finish, undefined)
      yield* Fiber.join(third.fiber)
      assert.deepStrictEqual(log, ["first", "second", "redis answers", "third"])
      yield* expectClean(redis, name)
    }))

  it.live("an older ticket of another process comes first: no hand-over past it", () =>
    Effect.gen(function*() {
      const server = yield* ownServer()
      const name = uniqueName("handover-foreign")
      const redis = yield* inspector(server.url)
      const a = yield* bulkheadOn(server.url, { name, permits: 1 })
      const b = yield* bulkheadOn(server.url, { name, permits: 1 })
      const log: Array<string> = []
      const first = yield* hold(a, undefined, log, "a holds")
      yield* Deferred.await(first.started)
      const older = yield* hold(b, undefined, log, "b's older ticket")
      yield* eventually(waitingIs(a, 1), "b's waiter queued")
      const younger = yield* hold(a, undefined, log, "a's younger ticket")
      yield* eventually(waitingIs(a, 2), "a's waiter queued")
      // a's waiter is a's oldest, not the fleet's: the permit goes through Redis, to b's
      yield* Deferred.succeed(first.finish, undefined)
      yield* Deferred.await(older.started)
      yield* Fiber.join(first.fiber)
      assert.deepStrictEqual(log, ["a holds", "b's older ticket"])
      const between = yield* stateOf(redis, name)
      assert.deepStrictEqual({ held: between.held.length, queued: between.queue.length }, { held: 1, queued: 1 })
      // b's ticket was its only one: b's release goes through Redis too, to a's
      yield* Deferred.succeed(older.finish, undefined)
      yield* Deferred.await(younger.started)
      yield* Deferred.succeed(younger.finish, undefined)
      yield* Fiber.join(younger.fiber)
      assert.deepStrictEqual(log, ["a holds", "b's older ticket", "a's younger ticket"])
      yield* expectClean(redis, name)
    }))

  it.live("a grant message tells the granted process its head run: it hands over down the run", () =>
    Effect.gen(function*() {
      const server = yield* ownServer()
      const name = uniqueName("handover-run")
      const [redis, probe] = [yield* inspector(server.url), yield* inspector(server.url)]
      const a = yield* bulkheadOn(server.url, { name, permits: 1 })
      const b = yield* bulkheadOn(server.url, { name, permits: 1 })
      const log: Array<string> = []
      const first = yield* hold(a, undefined, log, "a")
      yield* Deferred.await(first.started)
      const next = yield* hold(a, undefined, log, "a's next")
      yield* eventually(waitingIs(a, 1), "a's waiter queued")
      // when b queues, a's ticket is the oldest: b's replies tell it of no run of its own
      const waiters = [yield* hold(b, undefined, log, "b1"), yield* hold(b, undefined, log, "b2")]
      yield* eventually(waitingIs(a, 3), "b's waiters queued")
      yield* Deferred.succeed(first.finish, undefined)
      yield* Deferred.await(next.started)
      // a's last release grants b1 by a message, which tells b that b2 is the fleet's oldest after it
      yield* Deferred.succeed(next.finish, undefined)
      yield* Deferred.await(waiters[0].started)
      const back = yield* pause(redis, probe, 300, log)
      yield* Deferred.succeed(waiters[0].finish, undefined)
      yield* Deferred.await(waiters[1].started)
      yield* Fiber.join(back)
      assert.deepStrictEqual(log, ["a", "a's next", "b1", "b2", "redis answers"])
      yield* Deferred.succeed(waiters[1].finish, undefined)
      yield* Fiber.join(waiters[1].fiber)
      yield* expectClean(redis, name)
    }))

  it.live("a heavy oldest waiter is handed nothing lighter, and the light waiter behind it waits", () =>
    Effect.gen(function*() {
      const server = yield* ownServer()
      const name = uniqueName("handover-heavy")
      const redis = yield* inspector(server.url)
      const a = yield* bulkheadOn(server.url, { name, permits: 2 })
      const log: Array<string> = []
      const holders = [yield* hold(a, undefined, log, "h1"), yield* hold(a, undefined, log, "h2")]
      yield* Effect.forEach(holders, (h) => Deferred.await(h.started), { discard: true })
      const heavy = yield* hold(a, { permits: 2 }, log, "heavy")
      yield* eventually(waitingIs(a, 1), "the heavy waiter queued")
      const light = yield* hold(a, undefined, log, "light")
      yield* eventually(waitingIs(a, 2), "the light waiter queued")
      // one permit back: not enough for the head, and nobody behind it may take it
      yield* Deferred.succeed(holders[0].finish, undefined)
      yield* Fiber.join(holders[0].fiber)
      const between = yield* stateOf(redis, name)
      assert.deepStrictEqual({ used: between.used, queued: between.queue.length }, { used: 1, queued: 2 })
      assert.isFalse(yield* Deferred.isDone(light.started))
      yield* Deferred.succeed(holders[1].finish, undefined)
      yield* Deferred.await(heavy.started)
      yield* Deferred.succeed(heavy.finish, undefined)
      yield* Deferred.await(light.started)
      yield* Deferred.succeed(light.finish, undefined)
      yield* Fiber.join(light.fiber)
      assert.deepStrictEqual(log, ["h1", "h2", "heavy", "light"])
      yield* expectClean(redis, name)
    }))

  it.live("after a shrink no hand-over: the permits in use drain to the new K first", () =>
    Effect.gen(function*() {
      const server = yield* ownServer()
      const name = uniqueName("handover-shrink")
      const redis = yield* inspector(server.url)
      const a = yield* bulkheadOn(server.url, { name, permits: 2, maxPermits: 2 })
      const holders = [yield* hold(a), yield* hold(a)]
      yield* Effect.forEach(holders, (h) => Deferred.await(h.started), { discard: true })
      const waiter = yield* hold(a)
      yield* eventually(waitingIs(a, 1), "the waiter queued")
      yield* a.resize(1)
      // one holder ends: 1 in use, K = 1, so the waiter still waits
      yield* Deferred.succeed(holders[0].finish, undefined)
      yield* Fiber.join(holders[0].fiber)
      const between = yield* stateOf(redis, name)
      assert.deepStrictEqual({ used: between.used, queued: between.queue.length }, { used: 1, queued: 1 })
      assert.isFalse(yield* Deferred.isDone(waiter.started))
      yield* Deferred.succeed(holders[1].finish, undefined)
      yield* Deferred.await(waiter.started)
      yield* Deferred.succeed(waiter.finish, undefined)
      yield* Fiber.join(waiter.fiber)
      yield* expectClean(redis, name)
    }))

  it.live("a hand-over from a holder whose lease Redis no longer has: the heir is counted if its permits are free", () =>
    Effect.gen(function*() {
      const server = yield* ownServer()
      const name = uniqueName("handover-claimed")
      const redis = yield* inspector(server.url)
      const a = yield* bulkheadOn(server.url, { name, permits: 1 })
      const first = yield* hold(a)
      yield* Deferred.await(first.started)
      const heir = yield* hold(a)
      yield* eventually(waitingIs(a, 1), "the heir queued")
      // Redis loses the holder's lease (as a failover that lost the write would), and counts it no more
      const { keys } = RedisBulkhead.keysOf("sluice:bh:", name)
      const [holder] = (yield* stateOf(redis, name)).held
      const [waiter] = (yield* stateOf(redis, name)).queue
      yield* Effect.promise(() => redis.multi().zrem(keys[4], holder).hset(keys[1], "used", 0).exec())
      const lostBefore = yield* lostCount(name)
      yield* Deferred.succeed(first.finish, undefined)
      yield* Fiber.join(first.fiber)
      yield* Deferred.await(heir.started)
      // the permit is free: the heir is claimed, once
      const after = yield* stateOf(redis, name)
      assert.deepStrictEqual({ held: after.held, queue: after.queue, used: after.used }, {
        held: [waiter],
        queue: [],
        used: 1
      })
      assert.strictEqual((yield* lostCount(name)) - lostBefore, 0)
      yield* Deferred.succeed(heir.finish, undefined)
      yield* Fiber.join(heir.fiber)
      yield* expectClean(redis, name)
    }))

  it.live("a shrink by another process, not heard of yet: the heir is not counted past K, and learns it", () =>
    Effect.gen(function*() {
      const server = yield* ownServer()
      const name = uniqueName("handover-shrunk")
      const redis = yield* inspector(server.url)
      const lines: Array<string> = []
      const a = yield* bulkheadOn(server.url, { name, permits: 2, maxPermits: 2 })
      // the release's log line is written by the holder's fiber
      const holders = [yield* hold(a).pipe(Effect.provide(capturingLogs(lines))), yield* hold(a)]
      yield* Effect.forEach(holders, (h) => Deferred.await(h.started), { discard: true })
      const heir = yield* hold(a)
      yield* eventually(waitingIs(a, 1), "the heir queued")
      // another process starts with K = 1: the fleet's K is 1 from now on, and a has not heard
      yield* bulkheadOn(server.url, { name, permits: 1, maxPermits: 2 })
      const lostBefore = yield* lostCount(name)
      yield* Deferred.succeed(holders[0].finish, undefined)
      yield* Fiber.join(holders[0].fiber)
      yield* Deferred.await(heir.started)
      // the heir started before Redis could refuse it: Redis counts only the holder left, and the
      // heir knows it runs past K
      const after = yield* stateOf(redis, name)
      assert.deepStrictEqual(
        { held: after.held.length, queue: after.queue, used: after.used, permits: after.permits },
        {
          held: 1,
          queue: [],
          used: 1,
          permits: 1
        }
      )
      assert.strictEqual((yield* lostCount(name)) - lostBefore, 1)
      assert.isTrue(
        lines.some((line) =>
          line.includes("was lost: the permits a holder of this process handed it were not counted by Redis")
        ),
        lines.join("\n")
      )
      // the next release passes its permit on as usual: 1 in use of K = 1, once the lost heir is not counted
      const next = yield* hold(a)
      yield* eventually(waitingIs(a, 1), "the next waiter queued")
      yield* Deferred.succeed(holders[1].finish, undefined)
      yield* Fiber.join(holders[1].fiber)
      yield* Deferred.await(next.started)
      assert.strictEqual((yield* lostCount(name)) - lostBefore, 1)
      yield* Effect.forEach([heir, next], (h) => Deferred.succeed(h.finish, undefined), { discard: true })
      yield* Effect.forEach([heir, next], (h) => Fiber.join(h.fiber), { discard: true })
      yield* expectClean(redis, name)
    }))
})
