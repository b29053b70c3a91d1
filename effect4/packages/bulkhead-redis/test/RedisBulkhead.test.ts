/**
 * The local bulkhead's behaviour, on Redis: the bound, strict FIFO across connections, a heavy
 * head never overtaken, the queue bound and the wait budget, permits returned exactly once.
 * Each bulkhead of a test is on a connection of its own, as a separate process would be.
 */
import { assert, describe, it } from "@effect/vitest"
import { Bulkhead } from "@sluice/bulkhead"
import { RedisConnection } from "@sluice/redis"
import { Cause, Config, ConfigProvider, Deferred, Duration, Effect, Exit, Fiber, Layer } from "effect"
import { inject } from "vitest"
import { RedisBulkhead } from "../src/index.js"
import {
  bulkheadOn,
  commandCalls,
  connectionLayer,
  eventually,
  expectClean,
  hold,
  inspector,
  ownServer,
  probe,
  stateOf,
  uniqueName,
  waitingIs
} from "./utils/helpers.js"

const url = inject("redisUrl")

describe("RedisBulkhead", () => {
  it.live("never runs more than K calls at once across two connections", () =>
    Effect.gen(function*() {
      const name = uniqueName("bound")
      const a = yield* bulkheadOn(url, { name, permits: 3 })
      const b = yield* bulkheadOn(url, { name, permits: 3 })
      const { call: probed, counts } = probe()
      const call = probed(1, 5)
      yield* Effect.forEach(
        Array.from({ length: 40 }, (_, i) => i),
        (i) => (i % 2 === 0 ? a : b).run(call),
        { concurrency: "unbounded", discard: true }
      )
      assert.isAtMost(counts.peak, 3)
      assert.strictEqual(counts.peak, 3)
      yield* expectClean(yield* inspector(url), name)
    }))

  it.live("serves waiters in ticket order across connections", () =>
    Effect.gen(function*() {
      const name = uniqueName("fifo")
      const a = yield* bulkheadOn(url, { name, permits: 1 })
      const b = yield* bulkheadOn(url, { name, permits: 1 })
      const log: Array<string> = []
      const first = yield* hold(a)
      yield* Deferred.await(first.started)
      const waiters = []
      for (let i = 0; i < 6; i++) {
        // alternate the connections; each waiter is queued before the next one asks
        const waiter = yield* hold(i % 2 === 0 ? b : a, undefined, log, `w${i}`)
        yield* eventually(waitingIs(a, i + 1), `waiter ${i} queued`)
        waiters.push(waiter)
      }
      yield* Deferred.succeed(first.finish, undefined)
      for (const waiter of waiters) {
        yield* Deferred.await(waiter.started)
        yield* Deferred.succeed(waiter.finish, undefined)
      }
      yield* Effect.forEach(waiters, (w) => Fiber.join(w.fiber), { discard: true })
      assert.deepStrictEqual(log, ["w0", "w1", "w2", "w3", "w4", "w5"])
      yield* expectClean(yield* inspector(url), name)
    }))

  it.live(
    "the acquires and releases of one event-loop turn go to Redis as one script; a grant to the same instance comes back in its reply",
    () =>
      Effect.gen(function*() {
        const server = yield* ownServer()
        const name = uniqueName("batch")
        const redis = yield* inspector(server.url)
        const a = yield* bulkheadOn(server.url, { name, permits: 20 })
        const scripts = commandCalls(redis, "evalsha", "spublish")
        const calls = (n: number) =>
          Effect.all(Array.from({ length: n }, () => a.run(Effect.void)), { concurrency: "unbounded", discard: true })
        // the first call loads the script (NOSCRIPT, then EVAL); counted from the second on
        yield* a.run(Effect.void)
        yield* Effect.promise(() => redis.config("RESETSTAT"))
        // 20 acquires asked in one turn, then their 20 releases in the next: two scripts
        yield* calls(20)
        assert.deepStrictEqual(yield* scripts, { evalsha: 2, spublish: 0 })
        // 40 in one turn: more than a script carries (32), so two scripts, granting 20 and queueing 20;
        // the 20 releases hand their permits to the 20 waiting (the instance's own run), which Redis
        // hears in one script; their 20 releases in another
        yield* Effect.promise(() => redis.config("RESETSTAT"))
        yield* calls(40)
        assert.deepStrictEqual(yield* scripts, { evalsha: 4, spublish: 0 })
        yield* expectClean(redis, name)
      })
  )

  it.live(
    "two bulkheads of one name on one connection: a grant to the other is one message, a permit to itself passes without one",
    () =>
      Effect.gen(function*() {
        const server = yield* ownServer()
        const name = uniqueName("instances")
        const redis = yield* inspector(server.url)
        const context = yield* Layer.build(connectionLayer(server.url))
        // a long lease: the renewal beat (every 20 s) cannot be what tells a waiter here
        const options = { name, permits: 1, leaseTtl: "60 seconds" } as const
        const a = yield* Effect.provide(RedisBulkhead.make(options), context)
        const b = yield* Effect.provide(RedisBulkhead.make(options), context)
        const published = Effect.map(commandCalls(redis, "spublish"), (calls) => calls.spublish)
        const first = yield* hold(a)
        yield* Deferred.await(first.started)
        const other = yield* hold(b)
        yield* eventually(waitingIs(a, 1), "b's waiter queued")
        const before = yield* published
        // a's release grants b's waiter: a message on b's channel
        yield* Deferred.succeed(first.finish, undefined)
        yield* Deferred.await(other.started)
        assert.strictEqual((yield* published) - before, 1)
        // b's release hands its permit to b's next waiter itself: no message
        const own = yield* hold(b)
        yield* eventually(waitingIs(a, 1), "b's second waiter queued")
        yield* Deferred.succeed(other.finish, undefined)
        yield* Deferred.await(own.started)
        assert.strictEqual((yield* published) - before, 1)
        yield* Deferred.succeed(own.finish, undefined)
        yield* Fiber.join(own.fiber)
        yield* expectClean(redis, name)
      })
  )

  it.live("a heavy waiter at the head is not overtaken, and a newcomer does not barge", () =>
    Effect.gen(function*() {
      const name = uniqueName("weighted")
      const a = yield* bulkheadOn(url, { name, permits: 3 })
      const b = yield* bulkheadOn(url, { name, permits: 3 })
      const log: Array<string> = []
      const two = yield* hold(a, { permits: 2 }, log, "two")
      yield* Deferred.await(two.started)
      const heavy = yield* hold(b, { permits: 3 }, log, "heavy")
      yield* eventually(waitingIs(a, 1), "heavy queued")
      // one permit is free, but the queue is not empty: the light call queues behind the heavy one
      const light = yield* hold(a, { permits: 1 }, log, "light")
      yield* eventually(waitingIs(a, 2), "light queued")
      const stats = yield* a.stats
      assert.deepStrictEqual(
        {
          inFlight: stats.inFlight,
          holders: stats.holders,
          waiting: stats.waiting,
          waitingPermits: stats.waitingPermits
        },
        { inFlight: 2, holders: 1, waiting: 2, waitingPermits: 4 }
      )
      yield* Deferred.succeed(two.finish, undefined)
      yield* Deferred.await(heavy.started)
      assert.isFalse(yield* Deferred.isDone(light.started))
      yield* Deferred.succeed(heavy.finish, undefined)
      yield* Deferred.await(light.started)
      yield* Deferred.succeed(light.finish, undefined)
      yield* Fiber.join(light.fiber)
      assert.deepStrictEqual(log, ["two", "heavy", "light"])
      yield* expectClean(yield* inspector(url), name)
    }))

  it.live("a caller arriving at a full queue fails at once with BulkheadFull", () =>
    Effect.gen(function*() {
      const name = uniqueName("full")
      const a = yield* bulkheadOn(url, { name, permits: 1, maxWaiting: 1 })
      const first = yield* hold(a)
      yield* Deferred.await(first.started)
      const second = yield* hold(a)
      yield* eventually(waitingIs(a, 1), "second queued")
      const error = yield* Effect.flip(a.run(Effect.void))
      assert.strictEqual(error._tag, "BulkheadFull")
      assert.isTrue(Bulkhead.isBulkheadError(error))
      if (error._tag === "BulkheadFull") {
        assert.deepStrictEqual(
          { bulkhead: error.bulkhead, permits: error.permits, inFlight: error.inFlight, waiting: error.waiting },
          { bulkhead: name, permits: 1, inFlight: 1, waiting: 1 }
        )
        assert.include(error.message, `bulkhead "${name}" is full`)
      }
      yield* Deferred.succeed(first.finish, undefined)
      yield* Deferred.await(second.started)
      yield* Deferred.succeed(second.finish, undefined)
      yield* Fiber.join(second.fiber)
      yield* expectClean(yield* inspector(url), name)
    }))

  it.live("maxWait: a waiter gives up with PermitWaitTimeout and leaves the queue", () =>
    Effect.gen(function*() {
      const name = uniqueName("timeout")
      const a = yield* bulkheadOn(url, { name, permits: 1, maxWait: "200 millis" })
      const redis = yield* inspector(url)
      const first = yield* hold(a)
      yield* Deferred.await(first.started)
      const error = yield* Effect.flip(a.run(Effect.void))
      assert.strictEqual(error._tag, "PermitWaitTimeout")
      if (error._tag === "PermitWaitTimeout") {
        assert.deepStrictEqual(
          {
            bulkhead: error.bulkhead,
            waited: Duration.toMillis(error.waited),
            requested: error.requested,
            ahead: error.aheadWhenQueued
          },
          { bulkhead: name, waited: 200, requested: 1, ahead: 0 }
        )
      }
      // a budget of zero answers at once, without queueing
      const now = yield* Effect.flip(a.run(Effect.void, { maxWait: 0 }))
      assert.strictEqual(now._tag, "PermitWaitTimeout")
      const state = yield* stateOf(redis, name)
      assert.deepStrictEqual({ queue: state.queue.length, used: state.used }, { queue: 0, used: 1 })
      yield* Deferred.succeed(first.finish, undefined)
      yield* Fiber.join(first.fiber)
      yield* expectClean(redis, name)
    }))

  it.live("permits come back exactly once whether the call succeeds, fails, dies or is interrupted", () =>
    Effect.gen(function*() {
      const name = uniqueName("once")
      const a = yield* bulkheadOn(url, { name, permits: 2 })
      const redis = yield* inspector(url)
      assert.strictEqual(yield* a.run(Effect.succeed(1), { permits: 2 }), 1)
      yield* expectClean(redis, name)
      assert.deepStrictEqual(yield* Effect.flip(a.run(Effect.fail("boom"), { permits: 2 })), "boom")
      yield* expectClean(redis, name)
      const died = yield* Effect.exit(a.run(Effect.die("defect"), { permits: 2 }))
      assert.isTrue(Exit.isFailure(died) && Cause.hasDies(died.cause))
      yield* expectClean(redis, name)
      const held = yield* hold(a, { permits: 2 })
      yield* Deferred.await(held.started)
      yield* Fiber.interrupt(held.fiber)
      yield* expectClean(redis, name)
      // scoped acquire: held for the scope, given back when it closes
      yield* Effect.scoped(Effect.gen(function*() {
        yield* a.acquire({ permits: 2 })
        const state = yield* stateOf(redis, name)
        assert.strictEqual(state.used, 2)
      }))
      yield* expectClean(redis, name)
      const stats = yield* a.stats
      assert.deepStrictEqual(
        { permits: stats.permits, inFlight: stats.inFlight, holders: stats.holders, waiting: stats.waiting },
        { permits: 2, inFlight: 0, holders: 0, waiting: 0 }
      )
    }))

  it.live("resize sets K for the fleet; growing grants the queue at once", () =>
    Effect.gen(function*() {
      const name = uniqueName("resize")
      const a = yield* bulkheadOn(url, { name, permits: 1, maxPermits: 3 })
      const b = yield* bulkheadOn(url, { name, permits: 1, maxPermits: 3 })
      const first = yield* hold(a)
      yield* Deferred.await(first.started)
      const second = yield* hold(b)
      yield* eventually(waitingIs(a, 1), "second queued")
      yield* b.resize(2)
      yield* Deferred.await(second.started)
      assert.strictEqual((yield* a.stats).permits, 2)
      const defect = yield* Effect.exit(a.resize(4))
      assert.isTrue(Exit.isFailure(defect) && Cause.hasDies(defect.cause))
      yield* Deferred.succeed(first.finish, undefined)
      yield* Deferred.succeed(second.finish, undefined)
      yield* Fiber.join(second.fiber)
      yield* expectClean(yield* inspector(url), name)
    }))

  it.live("as a Bulkhead.Bulkhead (what a Provider takes), with its options", () =>
    Effect.gen(function*() {
      const name = uniqueName("view")
      const a = yield* bulkheadOn(url, { name, permits: 2, maxWait: "1 second" })
      const bulkhead: Bulkhead.Bulkhead<RedisBulkhead.BulkheadStoreError> = a.bulkhead
      assert.isTrue(Bulkhead.isBulkhead(bulkhead))
      assert.strictEqual(bulkhead.name, name)
      assert.strictEqual(bulkhead.maxPermits, 2)
      assert.strictEqual(Duration.toMillis(a.maxWait), 1000)
      assert.strictEqual(yield* bulkhead.run(Effect.succeed("ok")), "ok")
      assert.strictEqual(yield* Bulkhead.withBulkhead(Effect.succeed(2), bulkhead), 2)
      const stats = yield* bulkhead.stats
      assert.strictEqual(stats.permits, 2)
    }))

  it.live("Redis down: fail-closed with BulkheadStoreError naming the bulkhead, typed in the Bulkhead view", () =>
    Effect.gen(function*() {
      const name = uniqueName("down")
      // a port nobody listens on: the connection never becomes ready
      const connection = yield* RedisConnection.make({ url: "redis://127.0.0.1:1", connectTimeout: "300 millis" })
      const a = yield* Effect.provideService(
        RedisBulkhead.make({ name, permits: 1 }),
        RedisConnection.RedisConnection,
        connection
      )
      const error = yield* Effect.flip(a.run(Effect.succeed(1)))
      assert.strictEqual(error._tag, "BulkheadStoreError")
      assert.isTrue(RedisBulkhead.isBulkheadStoreError(error))
      assert.include(error.message, `bulkhead "${name}"`)
      assert.include(error.message, "fails closed")
      // it says which Redis and why it is unreachable, not ioredis' "Stream isn't writeable"
      assert.match(
        String(error),
        /^BulkheadStoreError: .*no connection to Redis at 127\.0\.0\.1:1 \(last error: connect ECONNREFUSED 127\.0\.0\.1:1; (re)?connecting\)/
      )
      assert.notInclude(error.message, "Stream isn't writeable")
      const viewed = yield* Effect.flip(a.bulkhead.run(Effect.succeed(1)))
      assert.isTrue(RedisBulkhead.isBulkheadStoreError(viewed))
      // stats of the view answer the last snapshot instead of failing
      assert.strictEqual((yield* a.bulkhead.stats).permits, 1)
    }))

  it.live("from Config: the connection and the bulkhead; invalid values are a ConfigError naming them", () =>
    Effect.gen(function*() {
      const name = uniqueName("config")
      class Permits extends Bulkhead.Tag("config-permits")<Permits, RedisBulkhead.BulkheadStoreError>() {}
      const live = RedisBulkhead.layerConfig(
        Permits,
        Config.map(Config.nested(RedisBulkhead.config, "UPSTREAM"), (o) => ({ ...o, name }))
      ).pipe(Layer.provide(RedisConnection.layerConfig(Config.nested(RedisConnection.config, "REDIS"))))
      const provider = (entries: Record<string, unknown>) =>
        Layer.succeed(
          ConfigProvider.ConfigProvider,
          ConfigProvider.fromUnknown(entries, { preserveEmptyStrings: true })
        )
      const stats = yield* Effect.flatMap(Permits, (b) => Effect.andThen(b.run(Effect.void), b.stats)).pipe(
        Effect.provide(Layer.provide(
          live,
          provider({
            REDIS: { URL: url },
            UPSTREAM: { PERMITS: "3", MAX_WAIT: "2 seconds", LEASE_TTL: "5 seconds" }
          })
        ))
      )
      assert.deepStrictEqual({ name: stats.name, permits: stats.permits }, { name, permits: 3 })
      const invalid = yield* Effect.flip(
        Effect.provide(
          Permits,
          Layer.provide(
            live,
            provider({ REDIS: { URL: url }, UPSTREAM: { PERMITS: "2", LEASE_TTL: "10 millis" } })
          )
        )
      )
      assert.include(String(invalid), `LEASE_TTL must be a duration from 300ms to 1 hour, got "10 millis"`)
    }))

  it("invalid options are a defect naming the bulkhead and the value", () => {
    const cases: ReadonlyArray<[RedisBulkhead.Options, string]> = [
      [{ name: "x", permits: 0 }, `bulkhead "x": permits must be an integer ≥ 1, got 0`],
      [
        { name: "x", permits: 1, leaseTtl: "10 millis" },
        `bulkhead "x": leaseTtl must be a duration from 300ms to 1 hour, got "10 millis"`
      ],
      [
        { name: "x", permits: 1, leaseTtl: 1e12 },
        `bulkhead "x": leaseTtl must be a duration from 300ms to 1 hour, got 1000000000000`
      ],
      [{ name: "a{b}", permits: 1 }, "without braces"],
      [{ name: "x", permits: 1, storeDown: "local" }, `bulkhead "x": localShare is needed with storeDown "local"`],
      [
        { name: "x", permits: 1, storeDown: "local", localShare: 1.5 },
        `bulkhead "x": localShare must be a number > 0 and ≤ 1, got 1.5`
      ],
      [
        { name: "x", permits: 1, localShare: 0.5 },
        `bulkhead "x": localShare applies to storeDown "local" only, got storeDown "fail-closed"`
      ],
      [
        { name: "x", permits: 1, storeDown: "open" as "fail-open" },
        `bulkhead "x": storeDown must be one of "fail-closed", "fail-open", "local", got "open"`
      ]
    ]
    for (const [options, message] of cases) {
      const exit = Effect.runSyncExit(
        Effect.scoped(
          Effect.provideService(
            RedisBulkhead.make(options),
            RedisConnection.RedisConnection,
            {} as RedisConnection.Service
          )
        )
      )
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) assert.include(String(Cause.squash(exit.cause)), message)
    }
  })

  it.effect("Config and the options decode through one schema: what one refuses, the other does", () =>
    Effect.gen(function*() {
      const read = (entries: Record<string, string>) =>
        Effect.result(RedisBulkhead.config.parse(ConfigProvider.fromUnknown(entries, { preserveEmptyStrings: true })))
      // Config.duration read "-5 seconds" as zero, a wait budget the options refuse
      const negative = yield* read({ PERMITS: "2", MAX_WAIT: "-5 seconds" })
      assert.isTrue(negative._tag === "Failure")
      if (negative._tag === "Failure") {
        assert.include(String(negative.failure), `MAX_WAIT must be a duration ≥ 0, got "-5 seconds"`)
      }
      // an unbounded queue, as the option takes Infinity (Config.integer refused it)
      const unbounded = yield* read({ PERMITS: "2", MAX_WAITING: "Infinity", STORE_DOWN: "local", LOCAL_SHARE: "0.5" })
      assert.deepStrictEqual(
        unbounded._tag === "Success" &&
          { maxWaiting: unbounded.success.maxWaiting, share: unbounded.success.localShare },
        { maxWaiting: Infinity, share: 0.5 }
      )
    }))
})
