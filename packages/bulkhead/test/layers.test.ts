import { assert, describe, it } from "@effect/vitest"
import { Bulkhead } from "@sluice/bulkhead"
import { Config, ConfigProvider, Context, Effect, Exit, Layer, ManagedRuntime, TestClock } from "effect"
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
        [{ PERMITS: "0" }, /PERMITS must be an integer ≥ 1/],
        [{ PERMITS: "abc" }, /PERMITS/],
        [{ PERMITS: "4", MAX_PERMITS: "2" }, /MAX_PERMITS must be ≥ PERMITS/],
        [{ PERMITS: "4", ORDER: "random" }, /ORDER/],
        [{ PERMITS: "4", MAX_WAITING: "-1" }, /MAX_WAITING must be an integer ≥ 0/],
        [{}, /PERMITS/]
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
