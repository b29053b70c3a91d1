/**
 * Interruption at every step — queued, granted but not yet told, holding, releasing — leaves no
 * ticket and no lease in Redis, and a grant message that never arrives is caught by the renewal.
 */
import { assert, describe, it } from "@effect/vitest"
import { BulkheadLanes } from "@sluice/bulkhead"
import { laneKeysOf } from "@sluice/core/FleetScripts"
import { Deferred, Effect, Exit, Fiber } from "effect"
import type { Redis } from "ioredis"
import { inject } from "vitest"
import {
  bulkheadOn,
  eventually,
  expectClean,
  hold,
  inspector,
  ownServer,
  probe,
  stateOf,
  uniqueName,
  waitingIs
} from "./utils/helpers.js"

const url = inject("redisUrl")

/** Drops every subscriber connection of the server: grants published now reach nobody. */
const killSubscribers = (redis: Redis) => Effect.promise(() => redis.client("KILL", "TYPE", "pubsub"))

describe("interruption", () => {
  it.live("queued: the interrupted waiter leaves the queue", () =>
    Effect.gen(function*() {
      const name = uniqueName("queued")
      const a = yield* bulkheadOn(url, { name, permits: 1 })
      const b = yield* bulkheadOn(url, { name, permits: 1 })
      const redis = yield* inspector(url)
      const first = yield* hold(a)
      yield* Deferred.await(first.started)
      const waiter = yield* hold(b, { permits: 1 })
      yield* eventually(waitingIs(a, 1), "waiter queued")
      yield* Fiber.interrupt(waiter.fiber)
      const state = yield* stateOf(redis, name)
      assert.deepStrictEqual({ queue: state.queue, wanted: state.wanted, used: state.used }, {
        queue: [],
        wanted: 0,
        used: 1
      })
      yield* Deferred.succeed(first.finish, undefined)
      yield* Fiber.join(first.fiber)
      yield* expectClean(redis, name)
    }))

  it.live("granted but not yet told: the interrupted waiter gives the grant back", () =>
    Effect.gen(function*() {
      // a server of the test's own: it drops every subscriber connection
      const server = yield* ownServer()
      const name = uniqueName("untold")
      // a long lease: the renewal must not tell the waiter before the interruption does
      const a = yield* bulkheadOn(server.url, { name, permits: 1, leaseTtl: "60 seconds" })
      const b = yield* bulkheadOn(server.url, { name, permits: 1, leaseTtl: "60 seconds" })
      const redis = yield* inspector(server.url)
      const first = yield* hold(a)
      yield* Deferred.await(first.started)
      const waiter = yield* hold(b)
      yield* eventually(waitingIs(a, 1), "waiter queued")
      const [member] = (yield* stateOf(redis, name)).queue
      // the grant is published while the subscribers are away (ioredis reconnects after 100 ms)
      yield* killSubscribers(redis)
      yield* Deferred.succeed(first.finish, undefined)
      yield* Fiber.join(first.fiber)
      const granted = yield* stateOf(redis, name)
      assert.deepStrictEqual(granted.held, [member])
      yield* Effect.sleep("300 millis")
      assert.isFalse(yield* Deferred.isDone(waiter.started), "the waiter was told")
      yield* Fiber.interrupt(waiter.fiber)
      yield* expectClean(redis, name)
    }))

  it.live("a grant message that never arrives is caught by the renewal", () =>
    Effect.gen(function*() {
      const server = yield* ownServer()
      const name = uniqueName("missed")
      const a = yield* bulkheadOn(server.url, { name, permits: 1, leaseTtl: "900 millis" })
      const b = yield* bulkheadOn(server.url, { name, permits: 1, leaseTtl: "900 millis" })
      const redis = yield* inspector(server.url)
      const first = yield* hold(a)
      yield* Deferred.await(first.started)
      const waiter = yield* hold(b)
      yield* eventually(waitingIs(a, 1), "waiter queued")
      yield* killSubscribers(redis)
      yield* Deferred.succeed(first.finish, undefined)
      yield* Deferred.await(waiter.started)
      yield* Deferred.succeed(waiter.finish, undefined)
      yield* Fiber.join(waiter.fiber)
      yield* expectClean(redis, name)
    }))

  it.live("holding and releasing: the call ends as it should and its permits come back once", () =>
    Effect.gen(function*() {
      const name = uniqueName("holding")
      const a = yield* bulkheadOn(url, { name, permits: 2 })
      const redis = yield* inspector(url)
      // interrupted while holding
      const held = yield* hold(a, { permits: 2 })
      yield* Deferred.await(held.started)
      yield* Fiber.interrupt(held.fiber)
      yield* expectClean(redis, name)
      // interrupted while releasing: the release is uninterruptible, the interruption waits for it
      const gate = yield* Deferred.make<void>()
      const fiber = yield* Effect.forkChild(a.run(Deferred.succeed(gate, undefined), { permits: 2 }))
      yield* Deferred.await(gate)
      yield* Fiber.interrupt(fiber)
      yield* expectClean(redis, name)
    }))

  it.live("a sweep: interrupting callers at every offset, anywhere in their life, leaks nothing", () =>
    Effect.gen(function*() {
      const name = uniqueName("sweep")
      const a = yield* bulkheadOn(url, { name, permits: 3 })
      const b = yield* bulkheadOn(url, { name, permits: 3, maxWait: "150 millis" })
      const redis = yield* inspector(url)
      const costs = [1, 2, 1, 3, 1, 2]
      const { call: probed, counts } = probe()
      for (let offset = 0; offset < 24; offset++) {
        const fibers: Array<Fiber.Fiber<void, unknown>> = []
        for (let i = 0; i < costs.length; i++) {
          const cost = costs[i]
          const call = probed(cost, 1 + (i % 3))
          fibers.push(yield* Effect.forkChild((i % 2 === 0 ? a : b).run(call, { permits: cost })))
        }
        // the offset walks the interruption through asking, queueing, granting, holding and releasing
        if (offset % 2 === 0) yield* Effect.repeat(Effect.yieldNow, { times: offset * 4 })
        else yield* Effect.sleep(`${offset / 2} millis`)
        yield* Fiber.interrupt(fibers[offset % costs.length])
        if (offset % 3 === 0) yield* Fiber.interruptAll(fibers)
        for (const fiber of fibers) {
          const exit = yield* Fiber.await(fiber)
          // success, interruption or a PermitWaitTimeout: nothing else
          if (Exit.isFailure(exit) && !Exit.hasInterrupts(exit)) {
            assert.include(String(exit.cause), "PermitWaitTimeout")
          }
        }
        yield* expectClean(redis, name)
      }
      assert.isAtMost(counts.peak, 3)
    }))
  for (
    const [policy, lanes, names] of [
      ["priority", BulkheadLanes.priority({ chat: {}, bulk: { yieldFor: "20 millis" } }), ["chat", "bulk"]],
      ["fairShare", BulkheadLanes.fairShare({ weights: { t1: 2 } }), ["t1", "t2", "t3"]]
    ] as const
  ) {
    it.live(`a sweep per lane (${policy}): interrupting callers of every lane at every offset leaks nothing`, () =>
      Effect.gen(function*() {
        const name = uniqueName(`sweep-${policy}`)
        const a = yield* bulkheadOn(url, { name, permits: 3, lanes })
        const b = yield* bulkheadOn(url, { name, permits: 3, maxWait: "150 millis", lanes })
        const redis = yield* inspector(url)
        const { keys } = laneKeysOf("sluice:bh:", name)
        const costs = [1, 2, 1, 3, 1, 2]
        const { call: probed, counts } = probe()
        for (let offset = 0; offset < 24; offset++) {
          const fibers: Array<Fiber.Fiber<void, unknown>> = []
          for (let i = 0; i < costs.length; i++) {
            const cost = costs[i]
            const lane = names[(i + offset) % names.length]
            fibers.push(
              yield* Effect.forkChild((i % 2 === 0 ? a : b).run(probed(cost, 1 + (i % 3)), { permits: cost, lane }))
            )
          }
          if (offset % 2 === 0) yield* Effect.repeat(Effect.yieldNow, { times: offset * 4 })
          else yield* Effect.sleep(`${offset / 2} millis`)
          // the interrupted callers walk through the lanes with the offset
          yield* Fiber.interrupt(fibers[offset % costs.length])
          yield* Fiber.interrupt(fibers[(offset + 1) % costs.length])
          if (offset % 3 === 0) yield* Fiber.interruptAll(fibers)
          for (const fiber of fibers) {
            const exit = yield* Fiber.await(fiber)
            if (Exit.isFailure(exit) && !Exit.hasInterrupts(exit)) {
              assert.include(String(exit.cause), "PermitWaitTimeout")
            }
          }
          yield* expectClean(redis, name)
          // no lane queue, waiting ticket or busy lane left, and every permit came back
          const left = yield* Effect.promise(() =>
            Promise.all([
              ...names.map((lane) => redis.zcard(`${keys[5]}:${lane}`)),
              redis.hlen(keys[6]),
              redis.llen(keys[7])
            ])
          )
          assert.deepStrictEqual(left, names.map(() => 0).concat([0, 0]), `offset ${offset}`)
          const stats = yield* a.stats
          // every lane named so far has been granted to or queued in: each is listed, none waits
          assert.deepStrictEqual(
            [stats.inFlight, stats.waiting, (stats.lanes ?? []).map((l) => l.waiting)],
            [0, 0, names.map(() => 0)]
          )
        }
        assert.isAtMost(counts.peak, 3)
      }))
  }
})
