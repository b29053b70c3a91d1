import { assert, describe, it } from "@effect/vitest"
import { Bulkhead } from "@sluice/bulkhead"
import {
  Cause,
  Config,
  ConfigError,
  ConfigProvider,
  Context,
  Effect,
  Either,
  Exit,
  Layer,
  ManagedRuntime,
  Option,
  TestClock
} from "effect"
import { uniqueName } from "./utils.js"

class Geocoder extends Bulkhead.Tag("geocoder")<Geocoder>() {}
class Payments extends Bulkhead.Tag("payments")<Payments>() {}

/** A batch of `n` calls of `millis` each, through the bulkhead, counting the peak in flight. */
const batch = (
  tag: Context.Tag<Geocoder, Bulkhead.Bulkhead>,
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
      }).pipe(Effect.fork)
      yield* TestClock.adjust("10 seconds")
      yield* fiber
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
      const work = Effect.repeatN(Effect.yieldNow(), 10)
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
      yield* Effect.forkAll(Array.from({ length: 11 }, () => geocoder.run(Effect.sleep("1 hour"))))
      const fiber = yield* Effect.fork(payments.run(Effect.sleep("1 second")))
      yield* TestClock.adjust("1 second")
      assert.isTrue(Exit.isSuccess(yield* fiber.await))
      assert.include(yield* geocoder.stats, { inFlight: 1, waiting: 10 })
    }).pipe(Effect.provide(Layer.merge(Geocoder.layer({ permits: 1 }), Payments.layer({ permits: 1 })))))

  it.effect("layerConfig reads validated options from Config", () =>
    Effect.gen(function*() {
      const layer = Geocoder.layerConfig(Bulkhead.config)
      const provider = ConfigProvider.fromMap(
        new Map([["PERMITS", "4"], ["MAX_PERMITS", "6"], ["MAX_WAITING", "50"], ["MAX_WAIT", "2 seconds"], [
          "ORDER",
          "lifo"
        ]])
      )
      const stats = yield* Effect.flatMap(Geocoder, (b) => b.stats).pipe(
        Effect.provide(layer),
        Effect.withConfigProvider(provider)
      )
      assert.include(stats, { name: "geocoder", permits: 4, maxPermits: 6, maxWaiting: 50 })
    }))

  it.effect("layerConfig refuses invalid values with a ConfigError naming the key", () =>
    Effect.gen(function*() {
      const cases: Array<[Record<string, string>, RegExp]> = [
        [{ PERMITS: "0" }, /at PERMITS: "PERMITS must be an integer ≥ 1, got "0"/],
        [{ PERMITS: "abc" }, /at PERMITS: "PERMITS must be an integer .*got "abc"/],
        [{ PERMITS: "12abc" }, /at PERMITS: "PERMITS must be an integer .*got "12abc"/],
        [
          { PERMITS: "1152921504606846976" },
          /PERMITS must be an integer ≥ 1, got "1152921504606846976" \(not a safe integer/
        ],
        [{ PERMITS: "4", MAX_PERMITS: "2" }, /at MAX_PERMITS: "MAX_PERMITS must be an integer ≥ PERMITS \(4\), got 2/],
        [{ PERMITS: "4", ORDER: "random" }, /ORDER/],
        [{ PERMITS: "4", MAX_WAITING: "-1" }, /at MAX_WAITING: "MAX_WAITING must be an integer ≥ 0 .*got "-1"/],
        [{ PERMITS: "4", MAX_WAIT: "-5 seconds" }, /at MAX_WAIT: "MAX_WAIT must be a duration ≥ 0, got "-5 seconds"/],
        [{ PERMITS: "4", MAX_WAIT: "-1 millis" }, /MAX_WAIT must be a duration ≥ 0, got "-1 millis"/],
        [{ PERMITS: "4", MAX_WAIT: "soon" }, /MAX_WAIT must be a duration ≥ 0, got "soon"/],
        [{ MAX_WAIT: "2 seconds" }, /at PERMITS: "PERMITS is missing while MAX_WAIT is set/],
        [{}, /Missing data at PERMITS/]
      ]
      for (const [env, message] of cases) {
        const error = yield* Effect.flatMap(Geocoder, (b) => b.stats).pipe(
          Effect.provide(Geocoder.layerConfig(Bulkhead.config)),
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))),
          Effect.flip
        )
        assert.match(String(error), message)
      }
    }))

  it.effect("a partly present section is a ConfigError naming the missing key; only a wholly absent one is not configured", () =>
    Effect.gen(function*() {
      const optional = Config.option(Config.nested(Bulkhead.config, "GEOCODER"))
      const read = (env: Record<string, string>) =>
        optional.pipe(
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)), { pathDelim: "_" })),
          Effect.either
        )
      // no key at all: "no bulkhead", and a required section reports the key as missing
      assert.deepStrictEqual(yield* read({ OTHER_PERMITS: "3" }), Either.right(Option.none()))
      // some keys, not PERMITS (forgotten or misspelt): an error naming it, never a silent None
      for (
        const [env, present] of [
          [{ GEOCODER_MAX_WAIT: "2 seconds" }, "MAX_WAIT is set"],
          [{ GEOCODER_PERMIT: "4", GEOCODER_MAX_WAITING: "10" }, "MAX_WAITING is set"],
          [{ GEOCODER_MAX_PERMITS: "8", GEOCODER_ORDER: "lifo" }, "MAX_PERMITS, ORDER are set"]
        ] as const
      ) {
        const result = yield* read(env)
        if (Either.isRight(result)) {
          return assert.fail(`read ${JSON.stringify(result.right)} from ${JSON.stringify(env)}`)
        }
        assert.isFalse(ConfigError.isMissingDataOnly(result.left), String(result.left))
        assert.include(String(result.left), `Invalid data at GEOCODER.PERMITS: "PERMITS is missing while ${present}`)
      }
      // the same through a layer: the build fails with the ConfigError
      const exit = yield* Effect.flatMap(Geocoder, (b) => b.stats).pipe(
        Effect.provide(Geocoder.layerConfig(Config.nested(Bulkhead.config, "GEOCODER"))),
        Effect.withConfigProvider(
          ConfigProvider.fromMap(new Map([["GEOCODER_MAX_WAIT", "2 seconds"]]), { pathDelim: "_" })
        ),
        Effect.exit
      )
      assert.isTrue(Exit.isFailure(exit) && Cause.isFailType(exit.cause) && ConfigError.isConfigError(exit.cause.error))
    }))

  it.effect("a negative MAX_WAIT is a ConfigError naming the value, not a budget of 0", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.flatMap(Geocoder, (b) => b.stats).pipe(
        Effect.provide(Geocoder.layerConfig(Bulkhead.config)),
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["PERMITS", "1"], ["MAX_WAIT", "-5 seconds"]]))),
        Effect.exit
      )
      if (Exit.isSuccess(exit)) return assert.fail("built a bulkhead with MAX_WAIT=-5 seconds")
      const failure = Cause.failureOption(exit.cause)
      assert.isTrue(Option.isSome(failure) && ConfigError.isConfigError(failure.value), String(exit.cause))
      assert.include(String(exit.cause), `MAX_WAIT must be a duration ≥ 0, got "-5 seconds"`)
    }))

  it.effect("Bulkhead.layer and layerConfig provide any tag; a nested config reads a provider's section", () =>
    Effect.gen(function*() {
      class Custom extends Context.Tag("test/Custom")<Custom, Bulkhead.Bulkhead>() {}
      const name = uniqueName("custom")
      const statsOf = Effect.flatMap(Custom, (b) => b.stats)
      const direct = yield* statsOf.pipe(Effect.provide(Bulkhead.layer(Custom, { name, permits: 5 })))
      assert.include(direct, { name, permits: 5 })
      const fromConfig = Bulkhead.layerConfig(
        Custom,
        Config.map(Config.nested(Bulkhead.config, "PHOTON"), (options) => ({ ...options, name }))
      )
      const nested = yield* statsOf.pipe(
        Effect.provide(fromConfig),
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["PHOTON.PERMITS", "7"]])))
      )
      assert.include(nested, { name, permits: 7, maxPermits: 7, maxWaiting: Infinity })
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
        const fromConfig = yield* Effect.exit(
          Effect.withConfigProvider(
            Bulkhead.config,
            ConfigProvider.fromMap(new Map(Object.entries({ PERMITS: "2", ...env })))
          )
        )
        assert.strictEqual(Exit.isSuccess(fromConfig), Exit.isSuccess(fromOptions), JSON.stringify(env))
      }
    }))
})
