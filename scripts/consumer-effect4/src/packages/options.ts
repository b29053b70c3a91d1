// @sluice/options: a bulkhead decoded from Config (its section and a refused key), and option
// schemas of the app's own, decoded in code and from Config with the same sentences.
import { Bulkhead } from "@sluice/bulkhead"
import { OptionSchema } from "@sluice/options"
import { Cause, Config, ConfigProvider, Effect, Result, Schema } from "effect"
import { check } from "../check.js"

class Search extends Bulkhead.Tag("search")<Search>() {}

const fromConfig = (values: Record<string, unknown>) =>
  Effect.flatMap(Search, (search) => search.stats).pipe(
    Effect.provide(Search.layerConfig(Config.nested(Bulkhead.config, "SEARCH"))),
    Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(values)))
  )

const bulkheadFromConfig = Effect.gen(function*() {
  const stats = yield* fromConfig({ SEARCH: { PERMITS: "3", MAX_WAITING: "7", MAX_WAIT: "2 seconds" } })
  yield* check(
    stats.name === "search" && stats.permits === 3 && stats.maxWaiting === 7,
    "the bulkhead is built from its Config section",
    stats
  )
  const refused = yield* Effect.flip(fromConfig({ SEARCH: { PERMITS: "3", MAX_WAIT: "-5 seconds" } }))
  yield* check(
    String(refused).includes("MAX_WAIT") && String(refused).includes("-5 seconds"),
    "a refused key names the key and the text",
    String(refused)
  )
  const missing = yield* Effect.flip(fromConfig({ SEARCH: { MAX_WAITING: "7" } }))
  yield* check(String(missing).includes("PERMITS"), "a section without PERMITS names it", String(missing))
})

const Retry = Schema.Struct({
  attempts: OptionSchema.integer({ min: 1 }),
  backoff: Schema.optional(OptionSchema.duration({ zero: true, infinite: false })),
  jitter: Schema.optional(OptionSchema.literal("none", "full"))
})

const ownSchemas = Effect.gen(function*() {
  const who = OptionSchema.owner("retry", "search")
  const decode = OptionSchema.decodeResult(Retry, who)
  const ok = decode({ attempts: 3, backoff: "100 millis" })
  yield* check(Result.isSuccess(ok) && ok.success.attempts === 3, "valid options decode", ok)
  const refused = decode({ attempts: 2 ** 60 })
  yield* check(
    Result.isFailure(refused) && refused.failure.startsWith(`retry "search": attempts must be an integer ≥ 1, got `),
    "a refusal is one sentence naming the owner, the option and the value",
    refused
  )
  const thrown = yield* Effect.flip(
    Effect.try({ try: () => OptionSchema.decodeSync(Retry, who)({ attempts: 0 }), catch: (e) => e })
  )
  yield* check(
    Cause.isIllegalArgumentError(thrown) && thrown.message === `retry "search": attempts must be an integer ≥ 1, got 0`,
    "decodeSync throws the same sentence as an IllegalArgumentError",
    String(thrown)
  )
  const section = Config.nested(OptionSchema.config(Retry, "a retry policy"), "RETRY")
  const parsed = yield* section.parse(ConfigProvider.fromUnknown({ RETRY: { ATTEMPTS: "4", JITTER: "full" } }))
  yield* check(parsed.attempts === 4 && parsed.jitter === "full", "the same schema reads a Config section", parsed)
  const strict = yield* Effect.flip(section.parse(ConfigProvider.fromUnknown({ RETRY: { ATTEMPTS: "12abc" } })))
  yield* check(String(strict).includes("12abc"), "Config text is read strictly", String(strict))
})

export const checks = Effect.andThen(bulkheadFromConfig, ownSchemas)
