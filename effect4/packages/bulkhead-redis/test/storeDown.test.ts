/**
 * Store-down policies on a real redis-server stopped and restarted (empty) mid-run: `local` and
 * `fail-open` admit calls on a local FIFO bulkhead while Redis is down, with a metric and a log;
 * the bulkhead recovers without a restart, and every holder that ran through the outage is
 * counted once in Redis (claimed when its permits are free), never twice.
 */
import { assert, describe, it } from "@effect/vitest"
import { scripts } from "@sluice/core/FleetScripts"
import { RedisConnection } from "@sluice/redis"
import { Deferred, Effect, Fiber, Layer, Metric } from "effect"
import { RedisBulkhead } from "../src/index.js"
import {
  bulkheadOn,
  capturingLogs,
  connectionLayer,
  degradedValue,
  eventually,
  expectClean,
  hold,
  inspector,
  ownServer,
  probe,
  restartableServer,
  stateOf,
  uniqueName
} from "./utils/helpers.js"

const fallbackCount = (name: string, policy: RedisBulkhead.StoreDownPolicy) =>
  Effect.map(
    Metric.value(Metric.withAttributes(RedisBulkhead.fallbackTotal, { name, policy })),
    (s) => s.count
  )

describe("store down", () => {
  const localLines: Array<string> = []
  it.live(
    "local: a local bulkhead of floor(K x localShare) while Redis is down; after a restart every holder counts once",
    () =>
      Effect.gen(function*() {
        const server = yield* restartableServer
        const name = uniqueName("local")
        const options = { name, permits: 4, leaseTtl: "900 millis", storeDown: "local", localShare: 0.5 } as const
        const a = yield* bulkheadOn(server.url, options)
        const b = yield* bulkheadOn(server.url, options)
        // a fleet holder from before the outage
        const before = yield* hold(a)
        yield* Deferred.await(before.started)
        yield* server.stop
        yield* eventually(Effect.map(degradedValue(name), (v) => v === 1), "degraded")
        // three calls while Redis is down: the local bulkhead (2 permits) runs two, queues the third
        const log: Array<string> = []
        const during = [yield* hold(a, undefined, log, "d0"), yield* hold(a, undefined, log, "d1")]
        yield* Effect.forEach(during, (h) => Deferred.await(h.started), { discard: true })
        const third = yield* hold(a, undefined, log, "d2")
        yield* Effect.sleep("100 millis")
        assert.deepStrictEqual(log, ["d0", "d1"])
        assert.strictEqual(yield* fallbackCount(name, "local"), 2)
        assert.isDefined(localLines.find((l) =>
          l.startsWith("WARN") && l.includes(`bulkhead "${name}"`) &&
          l.includes(`calls run on a local bulkhead of 2 permits (storeDown "local", of K = 4)`)
        ))
        // Redis comes back empty: the beat notices, and claims the three holders (1 from before, 2 local)
        yield* server.start
        const redis = yield* inspector(server.url)
        yield* eventually(Effect.map(degradedValue(name), (v) => v === 0), "recovered")
        yield* eventually(Effect.map(stateOf(redis, name), (s) => s.used === 3 && s.held.length === 3), "claimed")
        assert.isDefined(localLines.find((l) => l.startsWith("INFO") && l.includes("Redis answers again")))
        // counted once: the fleet has one permit left, taken by b; b's next call queues
        const fromB = yield* hold(b)
        yield* Deferred.await(fromB.started)
        const queued = yield* hold(b)
        yield* eventually(Effect.map(b.stats, (s) => s.waiting === 1 && s.inFlight === 4), "b's second call queued")
        // the holders end; the local waiter is admitted locally (a permit freed) and counted when free
        yield* Effect.forEach([before, ...during], (h) => Deferred.succeed(h.finish, undefined), { discard: true })
        yield* Deferred.await(third.started)
        yield* Deferred.await(queued.started)
        yield* Effect.forEach([third, fromB, queued], (h) => Deferred.succeed(h.finish, undefined), { discard: true })
        yield* Effect.forEach([before, ...during, third, fromB, queued], (h) => Fiber.join(h.fiber), { discard: true })
        yield* eventually(Effect.map(stateOf(redis, name), (s) => s.used === 0 && s.held.length === 0), "all released")
        yield* expectClean(redis, name)
      }).pipe(Effect.provide(capturingLogs(localLines))),
    { timeout: 60_000 }
  )

  it.live(
    "fail-open: admitted without a fleet permit, at most K at once in the process; never a store error",
    () =>
      Effect.gen(function*() {
        const server = yield* restartableServer
        const name = uniqueName("open")
        const a: RedisBulkhead.RedisBulkhead<never> = yield* Effect.flatMap(
          Layer.build(connectionLayer(server.url)),
          (context) =>
            Effect.provide(
              RedisBulkhead.make({ name, permits: 2, leaseTtl: "900 millis", storeDown: "fail-open" }),
              context
            )
        )
        yield* server.stop
        const { call, counts } = probe()
        yield* Effect.forEach(Array.from({ length: 12 }), () => a.run(call(1, 10)), {
          concurrency: "unbounded",
          discard: true
        })
        assert.strictEqual(counts.peak, 2)
        assert.strictEqual(yield* fallbackCount(name, "fail-open"), 12)
        // resize while down: the local bound follows at once, Redis hears it when it is back
        yield* a.resize(1)
        yield* server.start
        const redis = yield* inspector(server.url)
        yield* eventually(Effect.map(stateOf(redis, name), (s) => s.permits === 1), "the resize reached Redis")
        // Redis runs the resize before this process reads its reply, which is what clears the gauge
        yield* eventually(Effect.map(degradedValue(name), (value) => value === 0), "the degraded gauge back at 0")
        assert.strictEqual(yield* a.run(Effect.succeed("shared again")), "shared again")
        yield* expectClean(redis, name)
      }),
    { timeout: 60_000 }
  )

  it.live("claim: a missing lease is counted only when its permits are free, and never twice", () =>
    Effect.gen(function*() {
      const server = yield* ownServer()
      const name = uniqueName("claim")
      const redis = yield* inspector(server.url)
      const connection = yield* Effect.provide(
        RedisConnection.RedisConnection,
        yield* Layer.build(connectionLayer(server.url))
      )
      const { channel, keys } = RedisBulkhead.keysOf("sluice:bh:", name)
      const claim = (...members: ReadonlyArray<string>) =>
        Effect.map(
          connection.runScript(RedisConnection.script("claim", scripts.claim), keys, [channel, "2", ...members]),
          (reply) => (reply as ReadonlyArray<unknown>).slice(1)
        )
      // a fallback holder's member carries its cost and TTL: c:<cost>:<ttl>:<nonce>
      // free: claimed; the same member again: renewed, not counted twice
      assert.deepStrictEqual(yield* claim("c:1:5000:one"), ["c"])
      assert.deepStrictEqual(yield* claim("c:1:5000:one", "c:2:5000:two"), ["h", "x"])
      const state = yield* stateOf(redis, name)
      assert.deepStrictEqual({ held: state.held, used: state.used }, { held: ["c:1:5000:one"], used: 1 })
      assert.deepStrictEqual(yield* claim("c:1:5000:three"), ["c"])
      assert.strictEqual((yield* stateOf(redis, name)).used, 2)
    }))
})
