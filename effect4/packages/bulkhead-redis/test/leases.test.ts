/**
 * Leases: a holder that stops renewing loses its permits to the next ticket; the lease id fences
 * a stale holder, whose release or renewal cannot free another's permit; the holder learns it.
 */
import { assert, describe, it } from "@effect/vitest"
import { scripts } from "@sluice/core/FleetScripts"
import { RedisConnection } from "@sluice/redis"
import { Deferred, Effect, Exit, Fiber, Layer, Scope } from "effect"
import { inject } from "vitest"
import { RedisBulkhead } from "../src/index.js"
import {
  bulkheadOn,
  capturingLogs,
  connectionLayer,
  eventually,
  expectClean,
  hold,
  inspector,
  lostCount,
  stateOf,
  uniqueName
} from "./utils/helpers.js"

const url = inject("redisUrl")

describe("leases", () => {
  it.live("a holder that stops renewing loses its permits, which pass to the next ticket", () =>
    Effect.gen(function*() {
      const name = uniqueName("expiry")
      const redis = yield* inspector(url)
      // the holder's bulkhead lives in a scope of its own: closing it stops the renewals and the
      // connection, as a process that died would
      const scope = yield* Scope.make()
      const dying = yield* Effect.provideService(
        bulkheadOn(url, { name, permits: 1, leaseTtl: "600 millis" }),
        Scope.Scope,
        scope
      )
      const b = yield* bulkheadOn(url, { name, permits: 1, leaseTtl: "600 millis" })
      const holder = yield* hold(dying)
      yield* Deferred.await(holder.started)
      const waiter = yield* hold(b)
      yield* eventually(Effect.map(b.stats, (s) => s.waiting === 1), "waiter queued")
      yield* Scope.close(scope, Exit.void)
      yield* Deferred.await(waiter.started)
      const state = yield* stateOf(redis, name)
      assert.deepStrictEqual({ held: state.held.length, used: state.used, queue: state.queue.length }, {
        held: 1,
        used: 1,
        queue: 0
      })
      yield* Deferred.succeed(waiter.finish, undefined)
      yield* Fiber.join(waiter.fiber)
      yield* Fiber.interrupt(holder.fiber)
      yield* expectClean(redis, name)
    }))

  it.live("fencing: a stale holder's release and renewal cannot free the permit that passed on", () =>
    Effect.gen(function*() {
      const name = uniqueName("fence")
      const redis = yield* inspector(url)
      // the stale holder renews rarely (it will not notice before it releases); the waiter often
      const stale = yield* bulkheadOn(url, { name, permits: 1, leaseTtl: "60 seconds" })
      const b = yield* bulkheadOn(url, { name, permits: 1, leaseTtl: "600 millis" })
      const holder = yield* hold(stale)
      yield* Deferred.await(holder.started)
      const [staleMember] = (yield* stateOf(redis, name)).held
      const waiter = yield* hold(b)
      yield* eventually(Effect.map(b.stats, (s) => s.waiting === 1), "waiter queued")
      // the stale holder's lease ends (as if its process had been paused past it)
      yield* Effect.promise(() => redis.zadd(RedisBulkhead.keysOf("sluice:bh:", name).keys[4], "XX", 1, staleMember))
      yield* Deferred.await(waiter.started)
      const [member] = (yield* stateOf(redis, name)).held
      assert.notStrictEqual(member, staleMember)
      // the stale holder ends its call: its release finds no lease of its id and frees nothing
      yield* Deferred.succeed(holder.finish, undefined)
      yield* Fiber.join(holder.fiber)
      // its renewal and release sent by hand, the same
      const connection = yield* Effect.provide(
        RedisConnection.RedisConnection,
        yield* Layer.build(connectionLayer(url))
      )
      const { channel, keys } = RedisBulkhead.keysOf("sluice:bh:", name)
      const renewed = yield* connection.runScript(RedisConnection.script("renew", scripts.renew), keys, [
        channel,
        "1",
        staleMember
      ])
      assert.strictEqual((renewed as ReadonlyArray<unknown>)[1], "x")
      const left = yield* connection.runScript(RedisConnection.script("batch", scripts.batch), keys, [
        channel,
        "1",
        "a1",
        "600000",
        "-1",
        "r",
        staleMember,
        ""
      ])
      assert.strictEqual((left as ReadonlyArray<ReadonlyArray<unknown>>)[2][0], 0)
      const after = yield* stateOf(redis, name)
      assert.deepStrictEqual({ held: after.held, used: after.used }, { held: [member], used: 1 })
      yield* Deferred.succeed(waiter.finish, undefined)
      yield* Fiber.join(waiter.fiber)
      yield* expectClean(redis, name)
    }))

  it.live("a holder learns that its lease was lost: a metric, a log line, and with \"interrupt\" its call stops", () =>
    Effect.gen(function*() {
      const name = uniqueName("lost")
      const redis = yield* inspector(url)
      const lines: Array<string> = []
      const a = yield* bulkheadOn(url, { name, permits: 2, leaseTtl: "600 millis", onLeaseLost: "interrupt" })
      const holder = yield* hold(a)
      yield* Deferred.await(holder.started)
      const [member] = (yield* stateOf(redis, name)).held
      yield* Effect.promise(() => redis.zadd(RedisBulkhead.keysOf("sluice:bh:", name).keys[4], "XX", 1, member))
      const exit = yield* Fiber.await(holder.fiber)
      assert.isTrue(Exit.hasInterrupts(exit))
      assert.strictEqual(yield* lostCount(name), 1)
      // with "log" (default) the call goes on, and the log line names the bulkhead and the ticket
      const b = yield* bulkheadOn(url, { name, permits: 2, leaseTtl: "600 millis" }).pipe(
        Effect.provide(capturingLogs(lines))
      )
      const second = yield* hold(b)
      yield* Deferred.await(second.started)
      const [member2] = (yield* stateOf(redis, name)).held
      yield* Effect.promise(() => redis.zadd(RedisBulkhead.keysOf("sluice:bh:", name).keys[4], "XX", 1, member2))
      yield* eventually(Effect.map(lostCount(name), (n) => n === 2), "the second loss counted")
      assert.isFalse(yield* Deferred.isDone(second.finish))
      assert.isUndefined(second.fiber.pollUnsafe())
      yield* Deferred.succeed(second.finish, undefined)
      yield* Fiber.join(second.fiber)
      yield* expectClean(redis, name)
      const line = lines.find((l) => l.includes("was lost"))
      assert.isDefined(line)
      assert.include(line, `bulkhead "${name}": the lease of ticket ${member2} (1 permit) was lost`)
      // renewed a moment before Redis dropped it: the line says so, not "past its TTL"
      assert.match(line!, /renewed last \d+ms ago, within its TTL of 600ms: Redis lost it/)
    }))
})
