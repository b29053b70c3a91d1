/**
 * Every rule and every refused form, in code and from Config, and the whole-or-absent rule of a
 * Config section: the Effect 3 line's cases, with its messages byte for byte.
 */
import { assert, describe, it } from "@effect/vitest"
import { OptionSchema } from "@sluice/options"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"

const refusal = <A, I>(schema: Schema.Codec<A, I>, input: unknown): string => {
  const result = OptionSchema.decodeResult(Schema.Struct({ x: schema }), `thing "t"`)({ x: input })
  return Result.isFailure(result) ? result.failure : assert.fail(`${OptionSchema.show(input)} was accepted`)
}

const accepts = <A, I>(schema: Schema.Codec<A, I>, input: unknown): A =>
  Result.getOrThrowWith(OptionSchema.decodeResult(schema, "t")(input), (why) => new Error(why))

describe("show: the value as written", () => {
  it("NaN and Infinity by name, strings quoted, bigints, arrays and records element by element", () => {
    assert.strictEqual(OptionSchema.show(NaN), "NaN")
    assert.strictEqual(OptionSchema.show(-Infinity), "-Infinity")
    assert.strictEqual(OptionSchema.show("5 s"), `"5 s"`)
    assert.strictEqual(OptionSchema.show(5n), "5n")
    assert.strictEqual(OptionSchema.show([0, NaN]), "[0, NaN]")
    assert.strictEqual(OptionSchema.show({ a: NaN, b: 1 }), `{"a":"NaN","b":1}`)
    assert.strictEqual(OptionSchema.show(undefined), "undefined")
    assert.strictEqual(OptionSchema.show(Duration.seconds(2)), "2s")
  })
})

describe("integer", () => {
  const count = OptionSchema.integer({ min: 1 })
  it("accepts safe integers from min", () => {
    assert.strictEqual(accepts(count, 1), 1)
    assert.strictEqual(accepts(count, Number.MAX_SAFE_INTEGER), Number.MAX_SAFE_INTEGER)
    assert.strictEqual(accepts(OptionSchema.integer({ min: 0 }), 0), 0)
  })
  it("refuses every other form, naming the owner, the option and the value", () => {
    assert.strictEqual(refusal(count, 0), `thing "t": x must be an integer ≥ 1, got 0`)
    assert.strictEqual(refusal(count, -2), `thing "t": x must be an integer ≥ 1, got -2`)
    assert.strictEqual(refusal(count, 1.5), `thing "t": x must be an integer ≥ 1, got 1.5`)
    assert.strictEqual(refusal(count, NaN), `thing "t": x must be an integer ≥ 1, got NaN`)
    assert.strictEqual(refusal(count, Infinity), `thing "t": x must be an integer ≥ 1, got Infinity`)
    assert.strictEqual(refusal(count, "3"), `thing "t": x must be an integer ≥ 1, got "3"`)
    assert.strictEqual(refusal(count, undefined), `thing "t": x must be an integer ≥ 1, got undefined`)
    assert.strictEqual(
      refusal(count, 2 ** 60),
      `thing "t": x must be an integer ≥ 1, got 1152921504606847000 (not a safe integer: above 2^53 - 1)`
    )
  })
  it("with infinite, Infinity too", () => {
    const bound = OptionSchema.integer({ min: 0, infinite: true })
    assert.strictEqual(accepts(bound, Infinity), Infinity)
    assert.strictEqual(refusal(bound, NaN), `thing "t": x must be an integer ≥ 0 or Infinity, got NaN`)
  })
})

describe("number", () => {
  it("finite, within its bounds", () => {
    assert.strictEqual(accepts(OptionSchema.positive, 0.5), 0.5)
    assert.strictEqual(accepts(OptionSchema.nonNegative, 0), 0)
    assert.strictEqual(refusal(OptionSchema.positive, 0), `thing "t": x must be a finite number > 0, got 0`)
    assert.strictEqual(refusal(OptionSchema.nonNegative, -1), `thing "t": x must be a finite number ≥ 0, got -1`)
    assert.strictEqual(
      refusal(OptionSchema.nonNegative, Infinity),
      `thing "t": x must be a finite number ≥ 0, got Infinity`
    )
    assert.strictEqual(refusal(OptionSchema.positive, NaN), `thing "t": x must be a finite number > 0, got NaN`)
    const ratio = OptionSchema.number({ greaterThan: 0, max: 1 })
    assert.strictEqual(accepts(ratio, 1), 1)
    assert.strictEqual(refusal(ratio, 1.5), `thing "t": x must be a number > 0 and ≤ 1, got 1.5`)
    assert.strictEqual(
      refusal(OptionSchema.number({ min: 1 }), 0.5),
      `thing "t": x must be a finite number ≥ 1, got 0.5`
    )
  })
})

describe("duration", () => {
  const wait = OptionSchema.duration({ zero: true, infinite: true })
  const timeout = OptionSchema.duration({ zero: false, infinite: false })
  it("accepts every DurationInput form", () => {
    const millis = (input: unknown) => Duration.toMillis(accepts(wait, input))
    assert.strictEqual(millis(1500), 1500)
    assert.strictEqual(millis(2_000_000n), 2)
    assert.strictEqual(millis("2 seconds"), 2000)
    assert.strictEqual(millis([1, 500_000_000]), 1500)
    assert.strictEqual(millis(Duration.minutes(1)), 60_000)
    assert.strictEqual(millis(0), 0)
    assert.strictEqual(millis(Infinity), Infinity)
  })
  it("refuses negatives and NaN, which Effect's Duration reads as zero, naming the value", () => {
    for (
      const [input, shown] of [
        [-5, "-5"],
        [-1n, "-1n"],
        ["-5 seconds", `"-5 seconds"`],
        ["-1 millis", `"-1 millis"`],
        [[-1, 0], "[-1, 0]"],
        [[0, -1], "[0, -1]"],
        [[0, NaN], "[0, NaN]"],
        [NaN, "NaN"],
        [-Infinity, "-Infinity"],
        ["soon", `"soon"`],
        [{}, "{}"],
        [[1, 2, 3], "[1, 2, 3]"]
      ] as const
    ) {
      assert.strictEqual(refusal(wait, input), `thing "t": x must be a duration ≥ 0, got ${shown}`)
    }
  })
  it("refuses a negative Duration, which Effect 4 (not Effect 3) can construct", () => {
    assert.strictEqual(refusal(wait, Duration.millis(-5)), `thing "t": x must be a duration ≥ 0, got -5ms`)
    assert.strictEqual(
      refusal(wait, Duration.fromInputUnsafe("-Infinity")),
      `thing "t": x must be a duration ≥ 0, got -Infinity`
    )
  })
  it("zero and infinity refused where the variant says so", () => {
    assert.strictEqual(refusal(timeout, 0), `thing "t": x must be a finite duration > 0, got 0`)
    assert.strictEqual(refusal(timeout, "0 millis"), `thing "t": x must be a finite duration > 0, got "0 millis"`)
    assert.strictEqual(refusal(timeout, Infinity), `thing "t": x must be a finite duration > 0, got Infinity`)
    assert.strictEqual(
      refusal(timeout, Duration.infinity),
      `thing "t": x must be a finite duration > 0, got Infinity`
    )
    assert.strictEqual(
      refusal(OptionSchema.duration({ zero: false, infinite: true }), [0, 0]),
      `thing "t": x must be a duration > 0, got [0, 0]`
    )
    assert.strictEqual(
      Duration.toMillis(accepts(OptionSchema.duration({ zero: false, infinite: true }), Infinity)),
      Infinity
    )
  })
})

describe("literal, boolean, string", () => {
  it("refuse what is not theirs", () => {
    const order = OptionSchema.literal("fifo", "lifo")
    assert.strictEqual(accepts(order, "lifo"), "lifo")
    assert.strictEqual(refusal(order, "LIFO"), `thing "t": x must be one of "fifo", "lifo", got "LIFO"`)
    assert.strictEqual(refusal(order, NaN), `thing "t": x must be one of "fifo", "lifo", got NaN`)
    assert.strictEqual(refusal(OptionSchema.boolean, "yes"), `thing "t": x must be true or false, got "yes"`)
    assert.strictEqual(refusal(OptionSchema.string, 1), `thing "t": x must be a string, got 1`)
  })
})

describe("decodeSync and paths", () => {
  const Options = Schema.Struct({
    retry: Schema.optional(Schema.Struct({
      backoff: Schema.optional(Schema.Struct({ initial: OptionSchema.duration({ zero: true, infinite: false }) }))
    })),
    limits: Schema.optional(Schema.Array(Schema.Struct({ limit: OptionSchema.integer({ min: 1 }) })))
  })
  const decode = OptionSchema.decodeSync(Options, OptionSchema.owner("provider", "geo"))
  it("names the option by its path, as written in code", () => {
    assert.throws(
      () => decode({ retry: { backoff: { initial: "-1 millis" } } }),
      `provider "geo": retry.backoff.initial must be a finite duration ≥ 0, got "-1 millis"`
    )
    assert.throws(() => decode({ limits: [{ limit: 1 }, { limit: 0 }] }), `provider "geo": limits[1].limit must be`)
    assert.throws(() => decode({ retry: { backoff: {} } }), `provider "geo": retry.backoff.initial is missing`)
  })
  it("decodeOption: one option on its own", () => {
    const decode = OptionSchema.decodeOption(OptionSchema.integer({ min: 1 }), "workers")
    assert.deepStrictEqual(decode(2), Result.succeed(2))
    assert.deepStrictEqual(decode(NaN), Result.fail("workers must be an integer ≥ 1, got NaN"))
  })
  it("throws an IllegalArgumentError", () => {
    try {
      decode({ retry: { backoff: { initial: NaN } } })
      assert.fail("accepted")
    } catch (e) {
      assert.strictEqual((e as { _tag?: string })._tag, "IllegalArgumentError")
    }
  })
})

const Settings = Schema.Struct({
  permits: OptionSchema.integer({ min: 1 }),
  maxWaiting: Schema.optional(OptionSchema.integer({ min: 0, infinite: true })),
  maxWait: Schema.optional(OptionSchema.duration({ zero: true, infinite: true })),
  order: Schema.optional(OptionSchema.literal("fifo", "lifo")),
  shared: Schema.optional(OptionSchema.boolean),
  retryAfter: Schema.optional(Schema.Struct({
    min: Schema.optional(OptionSchema.duration({ zero: true, infinite: false })),
    ratio: Schema.optional(OptionSchema.number({ min: 0, max: 1 }))
  }))
})

// the provider as Config.schema reads it: a tree of text, the section under GEO; empty strings
// kept, as the Effect 3 line's `fromMap` keeps them (Effect 4's providers drop them by default)
const read = <A>(config: Config.Config<A>, entries: Record<string, string>) =>
  Effect.result(config.parse(ConfigProvider.fromUnknown({ GEO: entries }, { preserveEmptyStrings: true })))

const section = Config.nested(OptionSchema.config(Settings, "a bulkhead"), "GEO")

describe("config: the same schema, each key read as text", () => {
  it.effect("decodes every key, nested records flattened", () =>
    Effect.gen(function*() {
      const result = yield* read(section, {
        PERMITS: "4",
        MAX_WAITING: "Infinity",
        MAX_WAIT: " 2 seconds ",
        ORDER: "lifo",
        SHARED: "yes",
        RETRY_AFTER_MIN: "100 millis",
        RETRY_AFTER_RATIO: "0.5"
      })
      const settings = Result.getOrThrow(result)
      assert.strictEqual(settings.permits, 4)
      assert.strictEqual(settings.maxWaiting, Infinity)
      assert.strictEqual(settings.maxWait === undefined ? -1 : Duration.toMillis(settings.maxWait), 2000)
      assert.strictEqual(settings.order, "lifo")
      assert.strictEqual(settings.shared, true)
      assert.strictEqual(settings.retryAfter?.ratio, 0.5)
      assert.deepStrictEqual(Object.keys(Result.getOrThrow(yield* read(section, { PERMITS: "1" }))), ["permits"])
    }))

  it.effect("refuses with the key and the text as written: strict, never 12abc as 12", () =>
    Effect.gen(function*() {
      for (
        const [entries, message] of [
          [{ PERMITS: "0" }, `PERMITS must be an integer ≥ 1, got "0"`],
          [{ PERMITS: "12abc" }, `PERMITS must be an integer ≥ 1, got "12abc"`],
          [{ PERMITS: "" }, `PERMITS must be an integer ≥ 1, got ""`],
          [{ PERMITS: "1.5" }, `PERMITS must be an integer ≥ 1, got "1.5"`],
          [
            { PERMITS: "1152921504606846976" },
            `PERMITS must be an integer ≥ 1, got "1152921504606846976" (not a safe integer: above 2^53 - 1)`
          ],
          [{ PERMITS: "1", MAX_WAIT: "-5 seconds" }, `MAX_WAIT must be a duration ≥ 0, got "-5 seconds"`],
          [{ PERMITS: "1", MAX_WAIT: "-1 millis" }, `MAX_WAIT must be a duration ≥ 0, got "-1 millis"`],
          [{ PERMITS: "1", MAX_WAIT: "soon" }, `MAX_WAIT must be a duration ≥ 0, got "soon"`],
          [{ PERMITS: "1", ORDER: "random" }, `ORDER must be one of "fifo", "lifo", got "random"`],
          [{ PERMITS: "1", SHARED: "maybe" }, `SHARED must be true or false, got "maybe"`],
          [
            { PERMITS: "1", RETRY_AFTER_MIN: "Infinity" },
            `RETRY_AFTER_MIN must be a finite duration ≥ 0, got "Infinity"`
          ],
          [{ PERMITS: "1", RETRY_AFTER_RATIO: "2" }, `RETRY_AFTER_RATIO must be a number ≥ 0 and ≤ 1, got "2"`]
        ] as const
      ) {
        const result = yield* read(section, entries)
        if (Result.isSuccess(result)) return assert.fail(`${JSON.stringify(entries)} was accepted`)
        // the sentence is the Effect 3 line's; the key's path is Effect 4's own
        const key = message.slice(0, message.indexOf(" "))
        assert.strictEqual(String(result.failure), `ConfigError(SchemaError(${message}\n  at ["GEO"]["${key}"]))`)
      }
    }))

  it.effect("a wholly absent section is absent, so Config.option reads none; one set in part is an error", () =>
    Effect.gen(function*() {
      // absent in Effect 4's sense: no node at the section's path
      const elsewhere = ConfigProvider.fromUnknown({ OTHER: "1" })
      const absent = yield* Effect.result(section.parse(elsewhere))
      if (Result.isSuccess(absent)) return assert.fail("an absent section was read")
      assert.strictEqual(
        String(absent.failure),
        `ConfigError(SchemaError(Expected PERMITS to exist: a bulkhead needs it\n  at ["GEO"]["PERMITS"]))`
      )
      assert.isTrue(Option.isNone(yield* Config.option(section).parse(elsewhere)))

      for (
        const [entries, set] of [[{ MAX_WAIT: "2 seconds" }, "MAX_WAIT is set"], [{
          ORDER: "fifo",
          RETRY_AFTER_MIN: "1 second"
        }, "ORDER, RETRY_AFTER_MIN are set"]] as const
      ) {
        const partial = yield* read(Config.option(section), entries)
        if (Result.isSuccess(partial)) return assert.fail("a section set in part was read")
        assert.include(
          String(partial.failure),
          `PERMITS is missing while ${set}: a bulkhead is configured whole or not at all`
        )
      }
    }))

  it.effect("configKey: one key through the same schema", () =>
    Effect.gen(function*() {
      const key = Config.nested(
        OptionSchema.configKey(OptionSchema.duration({ zero: false, infinite: true }), "TIMEOUT"),
        "GEO"
      )
      assert.strictEqual(Duration.toMillis(Result.getOrThrow(yield* read(key, { TIMEOUT: "5 seconds" }))), 5000)
      const refused = yield* read(key, { TIMEOUT: "0 seconds" })
      if (Result.isSuccess(refused)) return assert.fail("0 seconds was accepted")
      assert.include(String(refused.failure), `TIMEOUT must be a duration > 0, got "0 seconds"`)
    }))
})

describe("make: a rule of a package's own, and rules across options", () => {
  const Url = OptionSchema.make(Schema.String.check(Schema.makeFilter((s) => s.startsWith("http"))), {
    rule: "an http(s) URL",
    fromText: (text) => text
  })
  const Range = Schema.Struct({ min: OptionSchema.integer({ min: 0 }), max: OptionSchema.integer({ min: 0 }) }).check(
    Schema.makeFilter((range) => range.min <= range.max || { path: ["max"], issue: "must be ≥ min" })
  )

  it("the rule speaks for a value of the wrong type and for one its check refuses", () => {
    assert.strictEqual(refusal(Url, "ftp://x"), `thing "t": x must be an http(s) URL, got "ftp://x"`)
    assert.strictEqual(refusal(Url, 1), `thing "t": x must be an http(s) URL, got 1`)
  })

  it.effect("a rule across options keeps its sentence, with the options written as their keys in Config", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(
        OptionSchema.decodeResult(Range, "range")({ min: 2, max: 1 }),
        Result.fail("range: max must be ≥ min")
      )
      const refused = yield* read(Config.nested(OptionSchema.config(Range, "a range"), "GEO"), { MIN: "2", MAX: "1" })
      if (Result.isSuccess(refused)) return assert.fail("a range with min above max was read")
      assert.strictEqual(String(refused.failure), `ConfigError(SchemaError(MAX must be ≥ MIN\n  at ["GEO"]["MAX"]))`)
    }))
})
