// @sluice/rate-limiter-redis: a limiter on the Redis store against the redis-server the consumer
// test started (REDIS_URL): two limiters of one name, as two processes would be, share one quota,
// and the keys the README names are on the server.
import { RateLimiter } from "@sluice/rate-limiter"
import { RedisRateLimiterStore } from "@sluice/rate-limiter-redis"
import { Effect, Layer } from "effect"
import { Redis } from "ioredis"
import { check } from "../check.js"

const url = process.env["REDIS_URL"]

const shared = (redisUrl: string) =>
  Effect.gen(function*() {
    const name = `consumer4-${process.pid}`
    const options = { name, limit: 1, window: "1 minute" } as const
    const first = yield* RateLimiter.make(options)
    const second = yield* RateLimiter.make(options)
    yield* first.take()
    const refused = yield* Effect.flip(second.take({ maxWait: 0 }))
    yield* check(refused._tag === "RateLimitExceeded", "two limiters of one name share the quota on Redis", refused)
    yield* check(
      String(refused).startsWith("RateLimitExceeded: "),
      "String(error) starts with its tag",
      String(refused)
    )
    // the limiter's state key (a sliding log would add the second)
    const state = RedisRateLimiterStore.keysOf("sluice:rl:", name, 1)[0] ?? "(no key)"
    const client = new Redis(redisUrl)
    const present = yield* Effect.promise(() => client.exists(state)).pipe(
      Effect.ensuring(Effect.promise(() => client.quit()))
    )
    yield* check(present === 1, "the limiter's state is on the server under its key", { state, present })
  }).pipe(Effect.provide(Layer.fresh(RedisRateLimiterStore.layer({ url: redisUrl }))))

export const checks = url === undefined
  ? Effect.die(new Error("REDIS_URL is not set: the consumer test starts a redis-server and sets it"))
  : shared(url)
