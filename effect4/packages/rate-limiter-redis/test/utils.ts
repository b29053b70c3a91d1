/** Helpers shared by the Redis store's tests: servers, clients, the store, its metrics and logs. */
import { RedisRateLimiterStore } from "@sluice/rate-limiter-redis"
import type * as RateLimiterStore from "@sluice/rate-limiter/RateLimiterStore"
import type { Scope } from "effect"
import { Effect, Logger, Metric } from "effect"
import { Redis } from "ioredis"
import { type RedisServer, startRedisServer } from "../../../../core/testing/redisServer.js"

/** A key prefix no other test uses. */
export const uniquePrefix = (label: string): string => `t-${label}-${globalThis.crypto.randomUUID().slice(0, 8)}:`

/** A plain ioredis client for inspecting Redis, closed with the scope. */
export const inspector = (url: string): Effect.Effect<Redis, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => new Redis(url, { maxRetriesPerRequest: 1 })),
    (redis) => Effect.promise(() => redis.quit().catch(() => redis.disconnect()))
  )

/** A Redis call from a test: a failure is a defect. */
export const call = <A>(f: () => Promise<A>): Effect.Effect<A> => Effect.promise(f)

/** The store, built in the current scope. */
export const store = (
  options: RedisRateLimiterStore.Options
): Effect.Effect<RateLimiterStore.Service, never, Scope.Scope> => RedisRateLimiterStore.make(options)

/** The value of the degraded gauge of one prefix. */
export const degradedValue = (prefix: string): Effect.Effect<number> =>
  Effect.map(
    Metric.value(Metric.withAttributes(RedisRateLimiterStore.degraded, { prefix })),
    (state) => Number(state.value)
  )

/** A logger layer that records every line (level and message) into `lines`. */
export const capturingLogs = (lines: Array<string>) =>
  Logger.layer([
    Logger.make(({ logLevel, message }) => {
      lines.push(`${logLevel.toUpperCase()} ${Array.isArray(message) ? message.join(" ") : String(message)}`)
    })
  ])

/** A redis-server of the test's own that can be stopped and started again on the same port. */
export const restartableServer = Effect.gen(function*() {
  let current: RedisServer | undefined = yield* Effect.promise(() => startRedisServer())
  const port = current.port
  yield* Effect.addFinalizer(() => Effect.promise(() => current === undefined ? Promise.resolve() : current.stop()))
  return {
    url: current.url,
    stop: Effect.promise(async () => {
      if (current !== undefined) await current.stop()
      current = undefined
    }),
    start: Effect.promise(async () => {
      if (current === undefined) current = await startRedisServer(port)
    })
  }
})

/** A redis-server of the test's own (for restarts and command statistics), stopped with the scope. */
export const ownServer = (port?: number): Effect.Effect<RedisServer, never, Scope.Scope> =>
  Effect.acquireRelease(Effect.promise(() => startRedisServer(port)), (server) => Effect.promise(() => server.stop()))
