import { assert, describe, it } from "@effect/vitest"
import { Bulkhead } from "@sluice/bulkhead"
import {
  Cause,
  Config,
  ConfigProvider,
  Context,
  Effect,
  Exit,
  Fiber,
  Layer,
  ManagedRuntime,
  Option,
  Result
} from "effect"
import { TestClock } from "effect/testing"
import { uniqueName } from "./utils.js"

/** Runs `effect` with Config read from `entries`, a tree of text (empty strings kept, as v3's fromMap). */
const withConfig = (entries: Record<string, unknown>) =>
  Effect.provideService(
    ConfigProvider.ConfigProvider,
    ConfigProvider.fromUnknown(entries, { preserveEmptyStrings: true })
  )

class Geocoder extends Bulkhead.Tag("geocoder")<Geocoder>() {}
class Payments extends Bulkhead.Tag("payments")<Payments>() {}

/** A batch of `n` calls of `millis` each, through the bulkhead, counting the peak in flight. */
const batch = (
  tag: Context.Key<Geocoder, Bulkhead.Bulkhead>,
  n: number,
  gauge: { live: number; peak: number },
  work: Effect.Effect<void> = Effect.sleep("100 millis")
) =>
  Effect.flatMap(tag, (bulkhead) =>
    Effect.forEach(
      Array.from({ length: n }, (_, i) => i),
      () =>
        bulkhead.run(
          Effect.acquireUseRelease(
            Effect.sync(() => {
              gauge.live++
              gauge.peak = Math.max(gauge.peak, gauge.live)
            }),
            () => work,
            () => Effect.sync(() => gauge.live--)
          )
        ),
      { concurrency: "unbounded", discard: true }
    ))

describe("layers", () => {
  it.effect("a tag declared with the factory is named by its id and provided by its layer", () =>
    Effect.gen(function*() {
      const bulkhead = yield* Geocoder
      assert.strictEqual(bulkhead.name, "geocoder")
      assert.strictEqual(Geocoder.key, "@sluice/bulkhead/geocoder")
      assert.isTrue(Bulkhead.isBulkhead(bulkhead))
      assert.include(yield* bulkhead.stats, { permits: 2, maxPermits: 8, maxWaiting: 10 })
    }).pipe(Effect.provide(Geocoder.layer({ permits: 2, maxPermits: 8, maxWaiting: 10 }))))

  it.effect("two batches in one runtime share one bound", () =>
    Effect.gen(function*() {
      const gauge = { live: 0, peak: 0 }
      const fiber = yield* Effect.all([batch(Geocoder, 20, gauge), batch(Geocoder, 20, gauge)], {
        concurrency: "unbounded"
      }).pipe(Effect.forkChild)
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.join(fiber)
      // each batch alone would run 3 at once; together they still see 3, not 6
      assert.strictEqual(gauge.peak, 3)
    }).pipe(Effect.provide(Geocoder.layer({ permits: 3 }))))

  it("a layer is built once and shared by everything a ManagedRuntime runs", async () => {
    const runtime = ManagedRuntime.make(Geocoder.layer({ permits: 3 }))
    try {
      const first = await runtime.runPromise(Geocoder)
      const second = await runtime.runPromise(Geocoder)
      assert.strictEqual(first, second)
      // two batches started separately on the runtime share the one bulkhead
      // (no clock here: the calls hold their permits for a few scheduler turns)
      const gauge = { live: 0, peak: 0 }
      const work = Effect.repeat(Effect.yieldNow, { times: 10 })
      await Promise.all([
        runtime.runPromise(batch(Geocoder, 9, gauge, work)),
        runtime.runPromise(batch(Geocoder, 9, gauge, work))
      ])
      assert.strictEqual(gauge.peak, 3)
    } finally {
      await runtime.dispose()
    }
  })

  it.effect("providers are isolated: a saturated bulkhead does not slow another", () =>
    Effect.gen(function*() {
      const geocoder = yield* Geocoder
      const payments = yield* Payments
      // the geocoder is stuck: its one permit is held for an hour and 10 callers queue behind it
      yield* Effect.forEach(Array.from({ length: 11 }), () => Effect.forkChild(geocoder.run(Effect.sleep("1 hour"))))
      const fiber = yield* Effect.forkChild(payments.run(Effect.sleep("1 second")))
      yield* TestClock.adjust("1 second")
      assert.isTrue(Exit.isSuccess(yield* Fiber.await(fiber)))
      assert.include(yield* geocoder.stats, { inFlight: 1, waiting: 10 })
    }).pipe(Effect.provide(Layer.merge(Geocoder.layer({ permits: 1 }), Payments.layer({ permits: 1 })))))

  it.effect("layerConfig reads validated options from Config", () =>
    Effect.gen(function*() {
      const layer = Geocoder.layerConfig(Bulkhead.config)
      const stats = yield* Effect.flatMap(Geocoder, (b) => b.stats).pipe(
        Effect.provide(layer),
        withConfig({ PERMITS: "4", MAX_PERMITS: "6", MAX_WAITING: "50", MAX_WAIT: "2 seconds", ORDER: "lifo" })
      )
      assert.include(stats, { name: "geocoder", permits: 4, maxPermits: 6, maxWaiting: 50 })
    }))

  it.effect("layerConfig refuses invalid values with a ConfigError naming the key", () =>
    Effect.gen(function*() {
      // the sentences are the Effect 3 line's; the key's path is written Effect 4's way
      const cases: Array<[Record<string, string>, string]> = [
        [{ PERMITS: "0" }, `PERMITS must be an integer ≥ 1, got "0"\n  at ["PERMITS"]`],
        [{ PERMITS: "abc" }, `PERMITS must be an integer ≥ 1, got "abc"\n  at ["PERMITS"]`],
        [{ PERMITS: "12abc" }, `PERMITS must be an integer ≥ 1, got "12abc"\n  at ["PERMITS"]`],
        [
          { PERMITS: "1152921504606846976" },
          `PERMITS must be an integer ≥ 1, got "1152921504606846976" (not a safe integer: above 2^53 - 1)`
        ],
        [
          { PERMITS: "4", MAX_PERMITS: "2" },
          `MAX_PERMITS must be an integer ≥ PERMITS (4), got 2\n  at ["MAX_PERMITS"]`
        ],
        [{ PERMITS: "4", ORDER: "random" }, `ORDER must be one of "fifo", "lifo", got "random"`],
        [{ PERMITS: "4", MAX_WAITING: "-1" }, `MAX_WAITING must be an integer ≥ 0 or Infinity, got "-1"`],
        [{ PERMITS: "4", MAX_WAIT: "-5 seconds" }, `MAX_WAIT must be a duration ≥ 0, got "-5 seconds"`],
        [{ PERMITS: "4", MAX_WAIT: "-1 millis" }, `MAX_WAIT must be a duration ≥ 0, got "-1 millis"`],
        [{ PERMITS: "4", MAX_WAIT: "soon" }, `MAX_WAIT must be a duration ≥ 0, got "soon"`],
        [{ MAX_WAIT: "2 seconds" }, `PERMITS is missing while MAX_WAIT is set: a bulkhead is configured whole`],
        [{}, `Expected PERMITS to exist: a bulkhead needs it`]
      ]
      for (const [env, message] of cases) {
        const error = yield* Effect.flatMap(Geocoder, (b) => b.stats).pipe(
          Effect.provide(Geocoder.layerConfig(Bulkhead.config)),
          withConfig(env),
          Effect.flip
        )
        assert.instanceOf(error, Config.ConfigError)
        assert.include(String(error), message, JSON.stringify(env))
      }
    }))

  it.effect("a partly present section is a ConfigError naming the missing key; only a wholly absent one is not configured", () =>
    Effect.gen(function*() {
      const optional = Config.option(Config.nested(Bulkhead.config, "GEOCODER"))
      const read = (env: Record<string, unknown>) => optional.pipe(withConfig(env), Effect.result)
      // no key at all: "no bulkhead"
      assert.deepStrictEqual(yield* read({ OTHER: { PERMITS: "3" } }), Result.succeed(Option.none()))
      // some keys, not PERMITS (forgotten or misspelt): an error naming it, never a silent None
      for (
        const [env, present] of [
          [{ MAX_WAIT: "2 seconds" }, "MAX_WAIT is set"],
          [{ PERMIT: "4", MAX_WAITING: "10" }, "MAX_WAITING is set"],
          [{ MAX_PERMITS: "8", ORDER: "lifo" }, "MAX_PERMITS, ORDER are set"]
        ] as const
      ) {
        const result = yield* read({ GEOCODER: env })
        if (Result.isSuccess(result)) {
          return assert.fail(`read ${JSON.stringify(result.success)} from ${JSON.stringify(env)}`)
        }
        assert.include(String(result.failure), `PERMITS is missing while ${present}`)
        assert.include(String(result.failure), `at ["GEOCODER"]["PERMITS"]`)
      }
      // the same through a layer: the build fails with the ConfigError
      const exit = yield* Effect.flatMap(Geocoder, (b) => b.stats).pipe(
        Effect.provide(Geocoder.layerConfig(Config.nested(Bulkhead.config, "GEOCODER"))),
        withConfig({ GEOCODER: { MAX_WAIT: "2 seconds" } }),
        Effect.exit
      )
      if (Exit.isSuccess(exit)) return assert.fail("built a bulkhead from a section without PERMITS")
      assert.instanceOf(Result.getOrThrow(Cause.findError(exit.cause)), Config.ConfigError)
    }))

  it.effect("a negative MAX_WAIT is a ConfigError naming the value, not a budget of 0", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.flatMap(Geocoder, (b) => b.stats).pipe(
        Effect.provide(Geocoder.layerConfig(Bulkhead.config)),
        withConfig({ PERMITS: "1", MAX_WAIT: "-5 seconds" }),
        Effect.exit
      )
      if (Exit.isSuccess(exit)) return assert.fail("built a bulkhead with MAX_WAIT=-5 seconds")
      const failure = Cause.findError(exit.cause)
      assert.isTrue(Result.isSuccess(failure) && failure.success instanceof Config.ConfigError, String(exit.cause))
      assert.include(String(exit.cause), `MAX_WAIT must be a duration ≥ 0, got "-5 seconds"`)
    }))

  it.effect("Bulkhead.layer and layerConfig provide any key; a nested config reads a provider's section", () =>
    Effect.gen(function*() {
      class Custom extends Context.Service<Custom, Bulkhead.Bulkhead>()("test/Custom") {}
      const name = uniqueName("custom")
      const statsOf = Effect.flatMap(Effect.service(Custom), (b) => b.stats)
      const direct = yield* statsOf.pipe(Effect.provide(Bulkhead.layer(Custom, { name, permits: 5 })))
      assert.include(direct, { name, permits: 5 })
      const fromConfig = Bulkhead.layerConfig(
        Custom,
        Config.map(Config.nested(Bulkhead.config, "PHOTON"), (options) => ({ ...options, name }))
      )
      const nested = yield* statsOf.pipe(Effect.provide(fromConfig), withConfig({ PHOTON: { PERMITS: "7" } }))
      assert.include(nested, { name, permits: 7, maxPermits: 7, maxWaiting: Infinity })
    }))
})

describe("Effect 4 layer memoization: each layer value is one bulkhead", () => {
  class A extends Bulkhead.Tag("memo-a")<A>() {}
  class B extends Bulkhead.Tag("memo-b")<B>() {}

  it.effect("two keys with the same settings in one program are two bounds", () =>
    Effect.gen(function*() {
      const a = yield* A
      const b = yield* B
      assert.notStrictEqual(a, b)
      yield* Effect.forkChild(a.run(Effect.never))
      yield* Effect.yieldNow
      assert.include(yield* a.stats, { inFlight: 1 })
      assert.include(yield* b.stats, { inFlight: 0 })
    }).pipe(Effect.provide(Layer.mergeAll(A.layer({ permits: 1 }), B.layer({ permits: 1 })))))

  it.effect("one layer value provided at the root and again inside is one bulkhead; { local: true } is another", () =>
    Effect.gen(function*() {
      const layer = Geocoder.layer({ permits: 1 })
      const [outer, inner, local] = yield* Effect.gen(function*() {
        const outer = yield* Geocoder
        const inner = yield* Effect.provide(Effect.service(Geocoder), layer)
        const local = yield* Effect.provide(Effect.service(Geocoder), layer, { local: true })
        return [outer, inner, local] as const
      }).pipe(Effect.provide(layer))
      assert.strictEqual(outer, inner)
      assert.notStrictEqual(outer, local)
    }))

  it.effect("sibling provides of one layer value without a common provide build two bulkheads", () =>
    Effect.gen(function*() {
      const layer = Geocoder.layer({ permits: 1 })
      const first = yield* Effect.provide(Effect.service(Geocoder), layer)
      const second = yield* Effect.provide(Effect.service(Geocoder), layer)
      assert.notStrictEqual(first, second)
    }))
})

describe("options and Config decode through one schema", () => {
  it.effect("a value the options accept, Config accepts as text, and the other way round", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [Partial<Bulkhead.Settings>, Record<string, string>]> = [
        [{ maxWaiting: Infinity }, { MAX_WAITING: "Infinity" }],
        [{ maxWaiting: 0 }, { MAX_WAITING: "0" }],
        [{ maxWait: 0 }, { MAX_WAIT: "0 millis" }],
        [{ maxWait: Infinity }, { MAX_WAIT: "Infinity" }],
        [{ maxWaiting: -1 }, { MAX_WAITING: "-1" }],
        [{ maxWait: "-1 millis" }, { MAX_WAIT: "-1 millis" }],
        [{ permits: Infinity }, { PERMITS: "Infinity" }],
        [{ permits: 2 ** 60 }, { PERMITS: String(2 ** 60) }]
      ]
      for (const [options, env] of cases) {
        const fromOptions = yield* Effect.exit(Bulkhead.make({ name: uniqueName("agree"), permits: 2, ...options }))
        const fromConfig = yield* Effect.exit(Bulkhead.config.pipe(withConfig({ PERMITS: "2", ...env })))
        assert.strictEqual(Exit.isSuccess(fromConfig), Exit.isSuccess(fromOptions), JSON.stringify(env))
      }
    }))
})
