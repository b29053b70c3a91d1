/**
 * The Redis store on the server's `TIME` (real clock), against a real redis-server: decisions,
 * cross-process pause and refunds, key layout and TTLs, one round trip per take, NOSCRIPT recovery
 * and option validation.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { RateLimiter } from "@sluice/rate-limiter"
import { RedisRateLimiterStore } from "@sluice/rate-limiter-redis"
import type * as RateLimiterStore from "@sluice/rate-limiter/RateLimiterStore"
import { Cause, Config, ConfigProvider, Effect, Exit, Layer } from "effect"
import { inject } from "vitest"
import { call, inspector, ownServer, store, uniquePrefix } from "./utils.js"

const url = inject("redisUrl")

const gcra = (limit: number, windowMillis: number, burst = 1): RateLimiterStore.LimitSpec => ({
  algorithm: "gcra",
  limit,
  windowMillis,
  burst
})

const serverMillis = (redis: { time: () => Promise<Array<string | number>> }) =>
  Effect.map(call(() => redis.time()), ([s, us]) => Number(s) * 1000 + Number(us) / 1000)

/** Parses INFO commandstats into calls per command. */
const commandCalls = (info: string): Map<string, number> => {
  const calls = new Map<string, number>()
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(match[1], Number(match[2]))
  return calls
}

describe("RedisRateLimiterStore on the server's TIME", () => {
  it.effect("decides on Redis' clock: the test's frozen clock plays no part", () =>
    Effect.gen(function*() {
      // it.effect runs under TestClock, frozen at 0: a store reading the caller's clock would see
      // every take at the same instant.
      const s = yield* store({ url, prefix: uniquePrefix("time") })
      const request = { key: "k", limits: [gcra(10, 1000)], cost: 1, maxWaitMillis: Number.POSITIVE_INFINITY }
      const first = yield* s.reserve(request)
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 40)))
      const second = yield* s.reserve(request)
      assert(first._tag === "Reserved" && second._tag === "Reserved")
      assert.strictEqual(first.delayMillis, 0)
      // 100 ms after the first start, minus the ≥ 40 ms that really passed between the two calls
      expect(second.delayMillis).toBeGreaterThan(0)
      expect(second.delayMillis).toBeLessThanOrEqual(60)
    }))

  it.live("paces a limiter's starts on the server's clock", () =>
    Effect.gen(function*() {
      const s = yield* store({ url, prefix: uniquePrefix("pace") })
      const limiter = yield* RateLimiter.make({ name: "pace", limit: 20, window: "1 second", store: s })
      const redis = yield* inspector(url)
      const starts = yield* Effect.forEach(
        Array.from({ length: 6 }),
        () => Effect.andThen(limiter.take(), serverMillis(redis)),
        { concurrency: "unbounded" }
      )
      const sorted = [...starts].sort((a, b) => a - b)
      // 50 ms apart on Redis' clock. Each instant is read from Redis after the take returns, so it
      // carries a read delay that varies on a loaded machine (never negative): every other start is
      // 100 ms later and the six span 250 ms: both leave 50 ms for that variation
      for (let i = 2; i < sorted.length; i++) expect(sorted[i] - sorted[i - 2]).toBeGreaterThan(50)
      expect(sorted[5] - sorted[0]).toBeGreaterThan(200)
    }).pipe(Effect.scoped))

  it.live("aligns fixed windows to the server's clock", () =>
    Effect.gen(function*() {
      const s = yield* store({ url, prefix: uniquePrefix("fixed") })
      const redis = yield* inspector(url)
      const limits: ReadonlyArray<RateLimiterStore.LimitSpec> = [
        { algorithm: "fixed-window", limit: 1, windowMillis: 1000, burst: 1 }
      ]
      const request = { key: "k", limits, cost: 1, maxWaitMillis: Number.POSITIVE_INFINITY }
      yield* s.reserve(request)
      const before = yield* serverMillis(redis)
      const second = yield* s.reserve(request)
      const after = yield* serverMillis(redis)
      assert(second._tag === "Reserved")
      // the second start is the next whole second of Redis' clock
      const nextSecond = Math.floor(before / 1000) * 1000 + 1000
      expect(before + second.delayMillis).toBeLessThanOrEqual(nextSecond + 1)
      expect(after + second.delayMillis).toBeGreaterThanOrEqual(nextSecond - 1)
    }).pipe(Effect.scoped))

  it.live("a pause set by one process holds every process back", () =>
    Effect.gen(function*() {
      const prefix = uniquePrefix("pause")
      const one = yield* store({ url, prefix })
      const two = yield* store({ url, prefix })
      yield* one.pause("k", 2000)
      const left = yield* two.readPause("k")
      expect(left).toBeGreaterThan(1500)
      expect(left).toBeLessThanOrEqual(2000)
      const refused = yield* two.reserve({ key: "k", limits: [gcra(100, 1000, 100)], cost: 1, maxWaitMillis: 0 })
      assert(refused._tag === "Refused")
      assert.strictEqual(refused.binding, -1)
      // limiters on two connections: the second one's take waits out the first one's pause
      const limiterOne = yield* RateLimiter.make({ name: "shared", limit: 100, window: "1 second", store: one })
      const limiterTwo = yield* RateLimiter.make({ name: "shared", limit: 100, window: "1 second", store: two })
      yield* limiterOne.pauseFor("300 millis")
      const error = yield* Effect.flip(limiterTwo.take({ maxWait: 0 }))
      assert.strictEqual(error._tag, "RateLimitExceeded")
      assert(error._tag === "RateLimitExceeded" && error.reason === "paused")
    }).pipe(Effect.scoped))

  it.live("refunds work across processes: the latest reservation is given back once", () =>
    Effect.gen(function*() {
      const prefix = uniquePrefix("refund")
      const one = yield* store({ url, prefix })
      const two = yield* store({ url, prefix })
      const limits = [gcra(1, 10_000)]
      const request = { key: "k", limits, cost: 1, maxWaitMillis: Number.POSITIVE_INFINITY }
      const a = yield* one.reserve(request)
      const b = yield* one.reserve(request)
      assert(a._tag === "Reserved" && b._tag === "Reserved")
      expect(b.delayMillis).toBeGreaterThan(9000)
      assert.isFalse(yield* two.refund({ key: "k", limits, cost: 1, reservation: a.reservation }), "not the latest")
      assert.isTrue(yield* two.refund({ key: "k", limits, cost: 1, reservation: b.reservation }))
      assert.isFalse(yield* one.refund({ key: "k", limits, cost: 1, reservation: b.reservation }), "only once")
      // b's slot is free again: the next take is where b was
      const c = yield* two.reserve(request)
      assert(c._tag === "Reserved")
      expect(Math.abs(c.delayMillis - b.delayMillis)).toBeLessThan(200)
      assert.notStrictEqual(c.reservation, b.reservation)
    }).pipe(Effect.scoped))

  it.live("several limits are decided in one script, on keys sharing one hash tag", () =>
    Effect.gen(function*() {
      const prefix = uniquePrefix("multi")
      const s = yield* store({ url, prefix })
      const redis = yield* inspector(url)
      const limits: ReadonlyArray<RateLimiterStore.LimitSpec> = [
        gcra(10, 1000, 2),
        { algorithm: "sliding-window", limit: 3, windowMillis: 60_000, burst: 3 },
        { algorithm: "fixed-window", limit: 100, windowMillis: 86_400_000, burst: 100 }
      ]
      const reserve = (maxWaitMillis: number) => s.reserve({ key: "geo:eu", limits, cost: 1, maxWaitMillis })
      for (let i = 0; i < 3; i++) assert.strictEqual((yield* reserve(Number.POSITIVE_INFINITY))._tag, "Reserved")
      const refused = yield* reserve(1000)
      assert(refused._tag === "Refused")
      assert.strictEqual(refused.binding, 1, "the sliding window binds")
      const keys = (yield* call(() => redis.keys(`${prefix}*`))).sort()
      const [hash, , log2] = RedisRateLimiterStore.keysOf(prefix, "geo:eu", 3)
      // the hash, and the log of the sliding window (limit 2); no key for the other limits' logs
      expect(keys).toEqual([hash, log2])
      // one hash tag for all, and the stored layout's version in every name
      expect([hash, log2]).toEqual([`${prefix}{geo:eu}:v2`, `${prefix}{geo:eu}:v2:log:2`])
      // the refusal charged nothing: three starts in the log, and the day window counts three
      assert.strictEqual(yield* call(() => redis.llen(`${prefix}{geo:eu}:v2:log:2`)), 3)
      // the state is n, id, latest, floor, pause, quiet, born (doubles), then per limit four doubles,
      // its own pause and the zero-terminated signature: the day window (the third limit) has its
      // base and count first
      const [n, dayCount, daySignature] = (yield* call(() =>
        redis.eval(
          `local raw = redis.call('GET', KEYS[1])
          local n, _, _, _, _, _, _, pos = struct.unpack('<ddddddd', raw)
          local base, count, sig
          for i = 1, n do base, count, _, _, _, sig, pos = struct.unpack('<ddddds', raw, pos) end
          return { n, count, sig }`,
          1,
          hash
        )
      )) as [number, number, string]
      assert.strictEqual(n, 3)
      assert.strictEqual(dayCount, 3, "the day window counts three")
      assert.strictEqual(daySignature, "f:100:86400000:100")
    }).pipe(Effect.scoped))
})

describe("keys and TTLs", () => {
  it.live("every key is gone once its state can no longer change a decision", () =>
    Effect.gen(function*() {
      const prefix = uniquePrefix("ttl")
      const s = yield* store({ url, prefix })
      const redis = yield* inspector(url)
      const reserve = (key: string, limits: ReadonlyArray<RateLimiterStore.LimitSpec>) =>
        s.reserve({ key, limits, cost: 1, maxWaitMillis: Number.POSITIVE_INFINITY })
      // GCRA 10/s: the bucket is full again 100 ms after the take
      yield* reserve("gcra", [gcra(10, 1000)])
      // a sliding window of 300 ms: its log slides out 300 ms after the start
      yield* reserve("sliding", [{ algorithm: "sliding-window", limit: 5, windowMillis: 300, burst: 5 }])
      // a pause of 400 ms
      yield* s.pause("paused", 400)
      const ttl = (key: string) => call(() => redis.pttl(key))
      const gcraTtl = yield* ttl(`${prefix}{gcra}:v2`)
      expect(gcraTtl).toBeGreaterThan(0)
      expect(gcraTtl).toBeLessThanOrEqual(100)
      const logTtl = yield* ttl(`${prefix}{sliding}:v2:log:1`)
      expect(logTtl).toBeGreaterThan(0)
      expect(logTtl).toBeLessThanOrEqual(300)
      expect(yield* ttl(`${prefix}{sliding}:v2`)).toBeLessThanOrEqual(300)
      const pauseTtl = yield* ttl(`${prefix}{paused}:v2`)
      expect(pauseTtl).toBeGreaterThan(300)
      expect(pauseTtl).toBeLessThanOrEqual(400)
      yield* Effect.sleep("550 millis")
      expect(yield* call(() => redis.keys(`${prefix}*`))).toEqual([])
    }).pipe(Effect.scoped))

  it.live("a busy key's TTL always covers its state, though takes close together share one expiry", () =>
    Effect.gen(function*() {
      const prefix = uniquePrefix("busy")
      const s = yield* store({ url, prefix })
      const redis = yield* inspector(url)
      // 2 per millisecond, with room for every take at once: each take moves the theoretical
      // arrival time 0.5 ms further, faster than time passes, so the state outlives the rounds of
      // takes; a take keeps the TTL the previous one set (KEEPTTL) while it still covers the state
      // (the TTL is whole milliseconds: about every other take)
      const request = { key: "busy", limits: [gcra(2_000, 1000, 2_000)], cost: 1, maxWaitMillis: 0 }
      // Redis keeps a key through the millisecond of its expiry: it must stay until the bucket is
      // full again, the theoretical arrival time (the first limit's first double)
      const covers = call(() =>
        redis.eval(
          `local raw = redis.call('GET', KEYS[1])
          if not raw then return -1 end
          local _, _, _, _, _, _, _, tat = struct.unpack('<dddddddd', raw)
          if redis.call('PEXPIRETIME', KEYS[1]) + 1 >= tat then return 1 end
          return 0`,
          1,
          `${prefix}{busy}:v2`
        )
      )
      const checks: Array<unknown> = []
      for (let round = 0; round < 8; round++) {
        yield* Effect.forEach(Array.from({ length: 64 }), () => s.reserve(request), {
          concurrency: "unbounded",
          discard: true
        })
        checks.push(yield* covers)
      }
      // -1: the key was gone, which only happens once its state is over (a loaded machine may
      // take longer between the last take and the check than the state lasts)
      expect(checks.filter((c) => c === 0)).toEqual([])
      expect(checks, "the state outlived some rounds").toContain(1)
    }).pipe(Effect.scoped))

  it.live("a take costs exactly one command (EVALSHA), and survives SCRIPT FLUSH", () =>
    Effect.gen(function*() {
      // its own server: INFO commandstats counts every client of the server
      const server = yield* ownServer()
      const s = yield* store({ url: server.url, prefix: uniquePrefix("rtt") })
      const limiter = yield* RateLimiter.make({ name: "rtt", limit: 1_000_000, window: "1 second", store: s })
      const redis = yield* inspector(server.url)
      yield* call(() => redis.ping())
      yield* call(() => redis.config("RESETSTAT"))
      yield* Effect.forEach(Array.from({ length: 200 }), () => limiter.take(), { concurrency: 16, discard: true })
      const calls = commandCalls(yield* call(() => redis.info("commandstats")))
      // commandstats also counts the commands the script runs inside Redis (TIME, GET, SET): those
      // are no round trips. The client sent one EVALSHA per take and nothing else.
      const fromScript = ["time", "get", "set"]
      const fromClient = [...calls.keys()].filter((c) => !fromScript.includes(c) && !/^(config|info)/.test(c))
      expect(fromClient).toEqual(["evalsha"])
      assert.strictEqual(calls.get("evalsha"), 200)
      // a restarted Redis has no scripts: the take sends its text once (EVAL, which caches it) and goes on
      yield* call(() => redis.script("FLUSH"))
      yield* call(() => redis.config("RESETSTAT"))
      yield* limiter.take()
      yield* limiter.take()
      const after = commandCalls(yield* call(() => redis.info("commandstats")))
      assert.strictEqual(after.get("evalsha"), 2, "NOSCRIPT, then one for the next take")
      assert.strictEqual(after.get("eval"), 1, "the text, once")
      assert.isUndefined(after.get("script|load"))
    }).pipe(Effect.scoped))
})

describe("options", () => {
  /** The defect's message of building a store with `options`. */
  const defectOf = (options: RedisRateLimiterStore.Options) =>
    Effect.map(Effect.exit(Effect.scoped(store(options))), (exit) => {
      assert(Exit.isFailure(exit), "a defect")
      const defect = Cause.squash(exit.cause)
      assert(Cause.isIllegalArgumentError(defect), "an IllegalArgumentError")
      return defect.message
    })

  /** The ConfigError of the section REDIS holding `entries`, as `String` prints it. */
  const configError = (entries: Record<string, string>) =>
    Effect.map(
      Effect.flip(
        Effect.scoped(
          Layer.build(RedisRateLimiterStore.layerConfig(Config.nested(RedisRateLimiterStore.config, "REDIS")))
        ).pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown({ REDIS: entries })))
      ),
      String
    )

  it.effect("a negative duration is refused with the value named, as an option and in Config", () =>
    Effect.gen(function*() {
      expect(yield* defectOf({ url, commandTimeout: "-5 seconds" })).toContain(
        `commandTimeout must be a finite duration > 0, got "-5 seconds"`
      )
      expect(yield* defectOf({ url, connectTimeout: -1 })).toContain(
        "connectTimeout must be a finite duration > 0, got -1"
      )
      const config = yield* configError({ URL: url, COMMAND_TIMEOUT: "-5 seconds" })
      expect(config).toContain(`["REDIS"]["COMMAND_TIMEOUT"]`)
      expect(config).toContain(`must be a finite duration > 0, got "-5 seconds"`)
    }))

  // every case of the URL's check is @sluice/redis's (test/RedisConnection.test.ts): here, that the
  // store applies it, as an option and in Config
  it.effect("a malformed or non-Redis URL is refused naming the option and the value", () =>
    Effect.gen(function*() {
      expect(yield* defectOf({ url: "localhost:6379" })).toContain(
        `Redis rate limiter store: url must use redis:// or rediss://, got "localhost:6379"`
      )
      const config = yield* configError({ URL: "https://127.0.0.1:6379" })
      expect(config).toContain("url must use redis:// or rediss://, got (redacted)")
    }))

  it.effect("LOCAL_SHARE without STORE_DOWN=local (missing or misspelt) is a ConfigError naming STORE_DOWN", () =>
    Effect.gen(function*() {
      const alone = yield* configError({ URL: url, LOCAL_SHARE: "0.5" })
      expect(alone).toContain(`["REDIS"]["STORE_DOWN"]`)
      expect(alone).toContain(`must be "local" when LOCAL_SHARE is set, got nothing`)
      expect(yield* configError({ URL: url, STORE_DWON: "local", LOCAL_SHARE: "0.5" })).toContain(
        `["REDIS"]["STORE_DOWN"]`
      )
    }))

  it.effect("invalid options are a defect naming the option", () =>
    Effect.gen(function*() {
      expect(yield* defectOf({ url, storeDown: "local" })).toContain("localShare is required")
      expect(yield* defectOf({ url, prefix: "a{b}:" })).toContain("prefix must be a string without braces")
    }))

  it.effect("localShare beside another policy is refused as an option, as LOCAL_SHARE is in Config", () =>
    Effect.gen(function*() {
      const refusal = (options: Partial<RedisRateLimiterStore.Options>) => defectOf({ url, ...options })
      expect(yield* refusal({ storeDown: "fail-open", localShare: 0.5 })).toContain(
        `Redis rate limiter store: storeDown must be "local" when localShare is set, got "fail-open"`
      )
      expect(yield* refusal({ limiters: { geo: { storeDown: "fail-closed", localShare: 0.5 } } })).toContain(
        `limiters.geo.storeDown must be "local" when localShare is set, got "fail-closed"`
      )
    }))

  it.live("layerConfig reads URL, PREFIX, STORE_DOWN and LOCAL_SHARE", () =>
    Effect.gen(function*() {
      const prefix = uniquePrefix("config")
      const provider = ConfigProvider.fromUnknown({
        REDIS: { URL: url, PREFIX: prefix, STORE_DOWN: "local", LOCAL_SHARE: "0.5" }
      })
      const layer = RedisRateLimiterStore.layerConfig(Config.nested(RedisRateLimiterStore.config, "REDIS"))
      yield* Effect.scoped(Effect.flatMap(
        RateLimiter.make({ name: "cfg", limit: 5, window: "1 second" }),
        (limiter) => limiter.take()
      )).pipe(Effect.provide(layer), Effect.provideService(ConfigProvider.ConfigProvider, provider))
      const redis = yield* inspector(url)
      expect(yield* call(() => redis.exists(`${prefix}{cfg}:v2`))).toBe(1)
      const invalid = ConfigProvider.fromUnknown({ URL: url, STORE_DOWN: "local", LOCAL_SHARE: "2" })
      const error = yield* Effect.flip(
        Effect.scoped(Layer.build(RedisRateLimiterStore.layerConfig(RedisRateLimiterStore.config))).pipe(
          Effect.provideService(ConfigProvider.ConfigProvider, invalid)
        )
      )
      expect(String(error)).toContain(`LOCAL_SHARE must be a number > 0 and ≤ 1, got "2"`)
    }).pipe(Effect.scoped))
})
