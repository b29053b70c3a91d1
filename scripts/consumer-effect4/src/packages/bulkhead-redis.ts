// @sluice/bulkhead-redis: fleet bulkheads against the redis-server the consumer test started
// (REDIS_URL): two of one name on connections of their own, as two processes would be, share
// its permits; a caller queued past its wait is told so; the keys the README names are on the
// server; a layer under a bulkhead tag that names the store error; a store error when Redis is gone.
import { Bulkhead } from "@sluice/bulkhead"
import { RedisBulkhead } from "@sluice/bulkhead-redis"
import { RedisConnection } from "@sluice/redis"
import { Deferred, Effect, Fiber, Layer, Logger } from "effect"
import { Redis } from "ioredis"
import * as net from "node:net"
import { check } from "../check.js"

const url = process.env["REDIS_URL"]

/** A connection of its own: another process, as far as Redis can tell. */
const ownConnection = (redisUrl: string) => Layer.build(RedisConnection.layer({ url: redisUrl }))

const shared = (redisUrl: string) =>
  Effect.gen(function*() {
    const name = `consumer4-${process.pid}`
    const options = { name, permits: 1, maxWait: "50 millis" } as const
    const first = yield* Effect.provide(RedisBulkhead.make(options), yield* ownConnection(redisUrl))
    const second = yield* Effect.provide(RedisBulkhead.make(options), yield* ownConnection(redisUrl))
    const started = yield* Deferred.make<void>()
    const finish = yield* Deferred.make<void>()
    const holder = yield* Effect.forkChild(
      first.run(Effect.andThen(Deferred.succeed(started, undefined), Deferred.await(finish)))
    )
    yield* Deferred.await(started)
    const fleet = yield* second.stats
    yield* check(fleet.inFlight === 1, "the other process's stats count the permit held", fleet)
    const refused = yield* Effect.flip(second.run(Effect.void))
    yield* check(
      refused._tag === "PermitWaitTimeout",
      "the one permit is the fleet's: the other waits, then gives up",
      refused
    )
    yield* check(
      String(refused).startsWith("PermitWaitTimeout: "),
      "String(error) starts with its tag",
      String(refused)
    )
    // the holders' key, under the name's hash tag
    const held = RedisBulkhead.keysOf("sluice:bh:", name).keys[4] ?? "(no key)"
    const client = new Redis(redisUrl)
    const present = yield* Effect.promise(() => client.exists(held)).pipe(
      Effect.ensuring(Effect.promise(() => client.quit()))
    )
    yield* check(present === 1, "the holder's lease is on the server under its key", { held, present })
    yield* Deferred.succeed(finish, undefined)
    yield* Fiber.join(holder)
    const after = yield* second.run(Effect.succeed("served"))
    yield* check(after === "served", "the released permit serves the other process", after)
  }).pipe(Effect.scoped)

class Search extends Bulkhead.Tag("consumer4-search")<Search, RedisBulkhead.BulkheadStoreError>() {}

const viaLayer = (redisUrl: string) =>
  Effect.gen(function*() {
    const search = yield* Search
    const served = yield* search.run(Effect.succeed(1))
    yield* check(served === 1, "a call runs under the layer's bulkhead", served)
    const stats = yield* search.stats
    yield* check(stats.permits === 2 && stats.inFlight === 0, "its stats are the fleet's", stats)
  }).pipe(
    Effect.provide(
      RedisBulkhead.layer(Search, { name: `consumer4-search-${process.pid}`, permits: 2 }).pipe(
        Layer.provide(RedisConnection.layer({ url: redisUrl }))
      )
    )
  )

/** A loopback port nothing listens on: one the system gave, then closed. */
const freePort = Effect.callback<number>((resume) => {
  const server = net.createServer().listen(0, "127.0.0.1", () => {
    const address = server.address()
    server.close(() => resume(Effect.succeed(typeof address === "object" && address !== null ? address.port : 0)))
  })
})

/** What the store-down check's bulkhead logs. */
const warnings: Array<string> = []

// nothing listens there: fail-closed, a call fails with the store error, its tag first
const storeDown = Effect.gen(function*() {
  const port = yield* freePort
  const bulkhead = yield* RedisBulkhead.make({ name: `consumer4-down-${process.pid}`, permits: 1 }).pipe(
    Effect.provide(
      yield* Layer.build(
        RedisConnection.layer({
          url: `redis://127.0.0.1:${port}`,
          connectTimeout: "500 millis",
          commandTimeout: "500 millis"
        })
      )
    )
  )
  const failed = yield* Effect.flip(bulkhead.run(Effect.void))
  yield* check(
    RedisBulkhead.isBulkheadStoreError(failed) && String(failed).startsWith("BulkheadStoreError: "),
    "a call while Redis is unreachable fails with BulkheadStoreError",
    String(failed)
  )
  yield* check(
    warnings.some((line) => line.includes("it fails closed while Redis is unreachable")),
    "the bulkhead warns that it fails closed",
    warnings
  )
}).pipe(
  Effect.scoped,
  // the warning is the check's, not the run's output
  Effect.provide(
    Logger.layer([
      Logger.make(({ message }) => warnings.push(Array.isArray(message) ? message.join(" ") : String(message)))
    ])
  )
)

export const checks = url === undefined
  ? Effect.die(new Error("REDIS_URL is not set: the consumer test starts a redis-server and sets it"))
  : Effect.andThen(Effect.andThen(shared(url), viaLayer(url)), storeDown)
