/**
 * The connection: scripts survive a flushed script cache (NOSCRIPT), an application's own ioredis
 * client is used as it is and left open, and one that would queue commands while Redis is down
 * is warned about.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Scope } from "effect"
import { Redis } from "ioredis"
import { inject } from "vitest"
import { RedisBulkhead, RedisConnection } from "../src/index.js"
import { scripts } from "../src/internal/scripts.js"
import { bulkheadOn, capturingLogs, expectClean, inspector, ownServer, uniqueName } from "./utils/helpers.js"

const url = inject("redisUrl")

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
})
