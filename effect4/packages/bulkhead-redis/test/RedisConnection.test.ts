/**
 * The bulkhead on its connection: its scripts survive a flushed script cache (NOSCRIPT), and a
 * Redis restart fails calls closed and recovers without a restart. The connection's own behaviour
 * (an application's client left open, the offline-queue warning) is tested in @sluice/redis.
 */
import { assert, describe, it } from "@effect/vitest"
import { scripts } from "@sluice/core/FleetScripts"
import { RedisConnection } from "@sluice/redis"
import { Effect } from "effect"
import { startRedisServer } from "../../../../core/testing/redisServer.js"
import {
  bulkheadOn,
  capturingLogs,
  degradedValue,
  eventually,
  expectClean,
  inspector,
  ownServer,
  uniqueName
} from "./utils/helpers.js"

describe("RedisConnection", () => {
  it.live("NOSCRIPT (a restarted or failed-over node) is answered by sending the script again", () =>
    Effect.gen(function*() {
      const server = yield* ownServer()
      const redis = yield* inspector(server.url)
      const name = uniqueName("noscript")
      const bulkhead = yield* bulkheadOn(server.url, { name, permits: 1 })
      assert.strictEqual(yield* bulkhead.run(Effect.succeed(1)), 1)
      yield* Effect.promise(() => redis.script("FLUSH"))
      assert.strictEqual(yield* bulkhead.run(Effect.succeed(2)), 2)
      // the text sent again is cached again: the next call is an EVALSHA
      const [cached] = (yield* Effect.promise(() =>
        redis.script("EXISTS", RedisConnection.script("batch", scripts.batch).sha)
      )) as Array<number>
      assert.strictEqual(cached, 1)
      yield* expectClean(redis, name)
    }))

  const restartLines: Array<string> = []
  it.live("Redis restarted: calls fail closed while it is down and succeed again without a restart", () =>
    Effect.gen(function*() {
      const lines = restartLines
      let server = yield* Effect.promise(() => startRedisServer())
      const port = server.port
      yield* Effect.addFinalizer(() => Effect.promise(() => server.stop()))
      const name = uniqueName("restart")
      const bulkhead = yield* bulkheadOn(server.url, { name, permits: 1 })
      assert.strictEqual(yield* bulkhead.run(Effect.succeed(1)), 1)
      yield* Effect.promise(() => server.stop())
      const error = yield* Effect.flip(bulkhead.run(Effect.succeed(2)))
      assert.strictEqual(error._tag, "BulkheadStoreError")
      assert.strictEqual(yield* degradedValue(name), 1)
      server = yield* Effect.promise(() => startRedisServer(port))
      // ioredis reconnects by itself; the first call that reaches Redis ends the degraded mode
      yield* eventually(
        Effect.map(Effect.result(bulkhead.run(Effect.succeed(3))), (r) => r._tag === "Success"),
        "a call after the restart"
      )
      assert.strictEqual(yield* degradedValue(name), 0)
      assert.isDefined(lines.find((l) => l.startsWith("WARN") && l.includes("fails closed")))
      assert.isDefined(lines.find((l) => l.startsWith("INFO") && l.includes("Redis answers again")))
      yield* expectClean(yield* inspector(server.url), name)
    }).pipe(Effect.provide(capturingLogs(restartLines))))
})
