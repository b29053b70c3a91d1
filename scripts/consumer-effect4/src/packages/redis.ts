// @sluice/redis: a connection layer from Config against the redis-server the consumer test started
// (REDIS_URL), a script and a command of the app's own on it, and a refused option.
import { RedisConnection } from "@sluice/redis"
import { Config, ConfigProvider, Effect, Redacted, Result } from "effect"
import { check } from "../check.js"

const url = process.env["REDIS_URL"]

const connected = Effect.gen(function*() {
  const redis = yield* RedisConnection.RedisConnection
  yield* check(redis.isReady(), "the layer's connection is ready")
  const incr = RedisConnection.script("incr", "return redis.call('INCRBY', KEYS[1], ARGV[1])")
  yield* redis.loadScripts([incr])
  const first = yield* redis.runScript(incr, ["{consumer4}:n"], ["2"])
  const second = yield* redis.runScript(incr, ["{consumer4}:n"], ["3"])
  yield* check(first === 2 && second === 5, "the script runs on the server", [first, second])
  const read = yield* Effect.promise(() => redis.client.get("{consumer4}:n"))
  yield* check(read === "5", "the client runs the app's own commands", read)
}).pipe(
  Effect.provide(RedisConnection.layerConfig(Config.nested(RedisConnection.config, "REDIS"))),
  Effect.provide(
    ConfigProvider.layer(ConfigProvider.fromUnknown({ REDIS: { URL: url, COMMAND_TIMEOUT: "2 seconds" } }))
  )
)

const refused = Effect.gen(function*() {
  const bad = RedisConnection.check({ url: Redacted.make("redis://user:secret@127.0.0.1:6379"), commandTimeout: -1 })
  yield* check(
    Result.isFailure(bad) && bad.failure.includes("commandTimeout") && !bad.failure.includes("secret"),
    "a refused option names the option, never a Redacted URL",
    bad
  )
})

export const checks = url === undefined
  ? Effect.die(new Error("REDIS_URL is not set: the consumer test starts a redis-server and sets it"))
  : Effect.andThen(connected, refused)
