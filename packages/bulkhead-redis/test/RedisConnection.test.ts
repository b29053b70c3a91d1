/**
 * The connection: scripts survive a flushed script cache (NOSCRIPT), an application's own ioredis
 * client is used as it is and left open, and one that would queue commands while Redis is down
 * is warned about.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Metric, Scope } from "effect"
import { Redis } from "ioredis"
import { inject } from "vitest"
import { startRedisServer } from "../../rate-limiter-redis/test/utils/redisServer.js"
import { RedisBulkhead, RedisConnection } from "../src/index.js"
import { scripts } from "../src/internal/scripts.js"
import {
  bulkheadOn,
  capturingLogs,
  eventually,
  expectClean,
  inspector,
  ownServer,
  uniqueName
} from "./utils/helpers.js"

const url = inject("redisUrl")

const degradedValue = (name: string) =>
  Effect.map(Metric.value(RedisBulkhead.storeDegraded.pipe(Metric.tagged("name", name))), (s) => s.value)

describe("RedisConnection", () => {
  it.scopedLive("NOSCRIPT (a restarted or failed-over node) is answered by sending the script again", () =>
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
        redis.script("EXISTS", RedisConnection.script("acquire", scripts.acquire).sha)
      )) as Array<number>
      assert.strictEqual(cached, 1)
      yield* expectClean(redis, name)
    }))

  it.scopedLive("an application's client is used as it is, and left open when the scope closes", () =>
    Effect.gen(function*() {
      const client = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 500 })
      yield* Effect.addFinalizer(() => Effect.promise(() => client.quit()))
      const lines: Array<string> = []
      const scope = yield* Scope.make()
      const name = uniqueName("client")
      const bulkhead = yield* Layer.build(RedisConnection.layer({ client })).pipe(
        Effect.flatMap((context) => Effect.provide(RedisBulkhead.make({ name, permits: 1 }), context)),
        Effect.provideService(Scope.Scope, scope),
        Effect.provide(capturingLogs(lines))
      )
      assert.strictEqual(yield* bulkhead.run(Effect.succeed("ok")), "ok")
      yield* Scope.close(scope, Exit.void)
      assert.strictEqual(client.status, "ready")
      assert.strictEqual(yield* Effect.promise(() => client.ping()), "PONG")
      assert.isUndefined(lines.find((l) => l.includes("enableOfflineQueue")))
    }))

  it.scopedLive("a client with the offline queue on is warned about", () =>
    Effect.gen(function*() {
      const client = new Redis(url)
      yield* Effect.addFinalizer(() => Effect.promise(() => client.quit()))
      const lines: Array<string> = []
      yield* RedisConnection.make({ client }).pipe(Effect.provide(capturingLogs(lines)))
      assert.isDefined(lines.find((l) => l.startsWith("WARN") && l.includes("enableOfflineQueue")))
    }))

  const restartLines: Array<string> = []
  it.scopedLive("Redis restarted: calls fail closed while it is down and succeed again without a restart", () =>
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
        Effect.map(Effect.either(bulkhead.run(Effect.succeed(3))), (r) => r._tag === "Right"),
        "a call after the restart"
      )
      assert.strictEqual(yield* degradedValue(name), 0)
      assert.isDefined(lines.find((l) => l.startsWith("WARN") && l.includes("fails closed")))
      assert.isDefined(lines.find((l) => l.startsWith("INFO") && l.includes("Redis answers again")))
      yield* expectClean(yield* inspector(server.url), name)
    }).pipe(Effect.provide(capturingLogs(restartLines))))
})
