/**
 * Redis stopped and started again in the middle of a run, once per store-down policy: takes never
 * hang, each policy answers as specified while Redis is away, the store reports itself degraded
 * (gauge and log line), and takes are decided by Redis again once it is back, without a restart.
 * A store that never reached Redis names the address and the refused connect.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { RateLimiter } from "@sluice/rate-limiter"
import type { RedisRateLimiterStore } from "@sluice/rate-limiter-redis"
import { Duration, Effect } from "effect"
import { call, capturingLogs, degradedValue, inspector, restartableServer, store, uniquePrefix } from "./utils.js"

/** A take that has not answered within 2 s has hung: a defect, not a wait. */
const noHang = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.timeoutOrElse(effect, { duration: "2 seconds", orElse: () => Effect.die("the take hung") })

const scenario = (
  policy: RedisRateLimiterStore.StoreDownPolicy,
  whileDown: (limiter: RateLimiter.RateLimiter) => Effect.Effect<void, unknown>
) =>
  Effect.gen(function*() {
    const lines: Array<string> = []
    const server = yield* restartableServer
    const prefix = uniquePrefix(policy)
    const run = Effect.gen(function*() {
      const s = yield* store({
        url: server.url,
        prefix,
        storeDown: policy,
        // the share of the local fallback, refused beside any other policy
        ...(policy === "local" ? { localShare: 0.5 } : {}),
        commandTimeout: "300 millis"
      })
      const limiter = yield* RateLimiter.make({ name: "down", limit: 10, window: "1 second", burst: 2, store: s })

      // Redis up: the burst, then the quota refuses (the contract suite checks the exact
      // instants; here real time passes between takes, so a loaded machine may refill a token)
      yield* noHang(limiter.take({ maxWait: 0 }))
      yield* noHang(limiter.take({ maxWait: 0 }))
      let refused: RateLimiter.RateLimiterError | undefined
      for (let i = 0; i < 5 && refused === undefined; i++) {
        refused = yield* Effect.flip(noHang(limiter.take({ maxWait: 0 }))).pipe(
          Effect.orElseSucceed(() => undefined)
        )
      }
      assert(refused?._tag === "RateLimitExceeded" && refused.reason === "quota")
      assert.strictEqual(yield* degradedValue(prefix), 0)

      yield* server.stop
      yield* whileDown(limiter)
      assert.strictEqual(yield* degradedValue(prefix), 1)
      expect(lines.filter((l) => l.startsWith("WARN")).length).toBe(1)
      expect(lines.find((l) => l.startsWith("WARN"))).toContain(`Redis rate limiter store "${prefix}" is degraded`)

      yield* server.start
      // ioredis reconnects by itself (backoff capped at 1 s); the first command that succeeds ends
      // the degraded mode. Bounded: 100 probes, 100 ms apart.
      for (let i = 0; i < 100 && (yield* degradedValue(prefix)) === 1; i++) {
        yield* Effect.ignore(s.readPause("down"))
        yield* Effect.sleep("100 millis")
      }
      assert.strictEqual(yield* degradedValue(prefix), 0, "recovered")
      expect(lines.some((l) => l.startsWith("INFO") && l.includes("recovered"))).toBe(true)

      // decided by Redis again (the restarted server lost its scripts: reloaded on NOSCRIPT)
      const redis = yield* inspector(server.url)
      yield* call(() => redis.config("RESETSTAT"))
      yield* noHang(limiter.take({ maxWait: "1500 millis" }))
      const stats = yield* call(() => redis.info("commandstats"))
      // EVALSHA answered NOSCRIPT (a new server has no scripts), then the text once with EVAL
      expect(stats).toMatch(/cmdstat_evalsha:calls=1,.*failed_calls=1/)
      expect(stats).toMatch(/cmdstat_eval:calls=1,/)
    })
    yield* run.pipe(Effect.provide(capturingLogs(lines)))
  }).pipe(Effect.scoped)

describe("Redis restarted in the middle of a run", () => {
  it.live("fail-closed: takes fail at once with RateLimiterStoreError", () =>
    scenario("fail-closed", (limiter) =>
      Effect.gen(function*() {
        for (let i = 0; i < 3; i++) {
          const error = yield* Effect.flip(noHang(limiter.take()))
          assert.strictEqual(error._tag, "RateLimiterStoreError")
          expect(error.message).toContain(`limiter "down" fails closed`)
        }
        const pauseError = yield* Effect.flip(noHang(limiter.pauseFor("1 second")))
        assert.strictEqual(pauseError._tag, "RateLimiterStoreError")
      })))

  it.live("fail-open: takes start at once, unlimited", () =>
    scenario("fail-open", (limiter) =>
      Effect.gen(function*() {
        // 20 starts at once under a 10/s quota whose burst was already spent
        for (let i = 0; i < 20; i++) yield* noHang(limiter.take({ maxWait: 0 }))
      })))

  it.live("local: an in-process limiter at the configured share decides", () =>
    scenario("local", (limiter) =>
      Effect.gen(function*() {
        // half of 10/s burst 2 is 5/s burst 1: one start now, the next 200 ms later (at the full
        // share, burst 2 would have let the second start at once). Real time passes between the
        // two takes on a loaded machine, so only the bounds of retryAfter are asserted. (The first
        // may wait: this process's pacer still counts the burst it started while Redis was up.)
        yield* noHang(limiter.take({ maxWait: "1 second" }))
        const error = yield* Effect.flip(noHang(limiter.take({ maxWait: 0 })))
        assert(error._tag === "RateLimitExceeded")
        expect(Duration.toMillis(error.retryAfter)).toBeGreaterThan(0)
        expect(Duration.toMillis(error.retryAfter)).toBeLessThanOrEqual(200)
        yield* noHang(limiter.take({ maxWait: "1 second" }))
        // a pause learned while down is kept locally and honoured
        yield* limiter.pauseFor("1 second")
        const paused = yield* Effect.flip(noHang(limiter.take({ maxWait: 0 })))
        assert(paused._tag === "RateLimitExceeded" && paused.reason === "paused")
      })))
})

describe("Redis never reached", () => {
  it.live("a take fails naming the Redis address and the refused connect", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const prefix = uniquePrefix("refused")
      const error = yield* Effect.gen(function*() {
        // a port nothing listens on: the store is degraded from the start
        const s = yield* store({ url: "redis://127.0.0.1:1", prefix, connectTimeout: "300 millis" })
        const limiter = yield* RateLimiter.make({ name: "refused", limit: 10, window: "1 second", store: s })
        return yield* Effect.flip(noHang(limiter.take({ maxWait: 0 })))
      }).pipe(Effect.scoped, Effect.provide(capturingLogs(lines)))
      assert.strictEqual(error._tag, "RateLimiterStoreError")
      expect(String(error)).toMatch(
        /^RateLimiterStoreError: Redis rate limiter store ".*": .*no connection to Redis at 127\.0\.0\.1:1 \(last error: connect ECONNREFUSED 127\.0\.0\.1:1; (re)?connecting\)/
      )
      expect(error.message).toContain(`limiter "refused" fails closed while Redis is unreachable`)
      expect(lines.find((l) => l.startsWith("WARN"))).toContain("no connection to Redis at 127.0.0.1:1 (last error:")
    }))
})
