/**
 * The options as `Config`: every key read as optional, then the section judged as a whole, so
 * that a partly present section is an error and only a wholly absent one is missing data.
 *
 * @internal
 */
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as Api from "../Bulkhead.js"

/**
 * An integer key, refused with its text unless it is a safe integer ≥ `min` (`Config.integer`
 * reads "12abc" as 12 and 2^60 as a number that is no longer exact).
 */
const integerKey = (key: string, min: number): Config.Config<number> =>
  Config.mapOrFail(Config.string(key), (text) => {
    const n = /^\s*[+-]?\d+\s*$/.test(text) ? Number(text) : NaN
    return Number.isSafeInteger(n) && n >= min
      ? Either.right(n)
      : Either.left(
        ConfigError.InvalidData(
          [],
          `${key} must be an integer from ${min} to ${Number.MAX_SAFE_INTEGER}, got ${JSON.stringify(text)}`
        )
      )
  })

/**
 * A duration key. `Config.duration` maps "-5 seconds" to zero, which for a budget means "never
 * wait": a negative budget is a mistake, so it is refused with its text instead.
 */
const durationKey = (key: string): Config.Config<Duration.Duration> =>
  Config.mapOrFail(Config.string(key), (text) => {
    const decoded = text.trim().startsWith("-") ? Option.none() : Duration.decodeUnknown(text.trim())
    return Option.match(decoded, {
      onNone: () =>
        Either.left(
          ConfigError.InvalidData([], `${key} must be a duration ≥ 0 such as "2 seconds", got ${JSON.stringify(text)}`)
        ),
      onSome: Either.right
    })
  })

/** @internal */
export const config: Config.Config<Api.Settings> = Config.all({
  permits: Config.option(integerKey("PERMITS", 1)),
  maxPermits: Config.option(integerKey("MAX_PERMITS", 1)),
  maxWaiting: Config.option(integerKey("MAX_WAITING", 0)),
  maxWait: Config.option(durationKey("MAX_WAIT")),
  order: Config.option(Config.literal("fifo", "lifo")("ORDER"))
}).pipe(
  Config.mapOrFail((read): Either.Either<Api.Settings, ConfigError.ConfigError> => {
    const options = {
      maxPermits: Option.getOrUndefined(read.maxPermits),
      maxWaiting: Option.getOrUndefined(read.maxWaiting),
      maxWait: Option.getOrUndefined(read.maxWait),
      order: Option.getOrUndefined(read.order)
    }
    if (Option.isNone(read.permits)) {
      // Only a wholly absent section is "not configured" (missing data, which `Config.option`
      // turns into None); a section with some keys and not PERMITS is a mistake to report.
      const set: Record<string, boolean> = {
        MAX_PERMITS: Option.isSome(read.maxPermits),
        MAX_WAITING: Option.isSome(read.maxWaiting),
        MAX_WAIT: Option.isSome(read.maxWait),
        ORDER: Option.isSome(read.order)
      }
      const present = Object.keys(set).filter((key) => set[key])
      return Either.left(
        present.length === 0
          ? ConfigError.MissingData(["PERMITS"], "Expected PERMITS to exist: a bulkhead needs its permits")
          : ConfigError.InvalidData(
            ["PERMITS"],
            `PERMITS is missing while ${present.join(", ")} ${present.length === 1 ? "is" : "are"} set: ` +
              `a bulkhead section is either complete or absent`
          )
      )
    }
    const permits = read.permits.value
    if (options.maxPermits !== undefined && options.maxPermits < permits) {
      return Either.left(
        ConfigError.InvalidData(
          ["MAX_PERMITS"],
          `MAX_PERMITS must be ≥ PERMITS (${permits}), got ${options.maxPermits}`
        )
      )
    }
    return Either.right({ permits, ...options })
  })
)
