/** @internal */
import { Bulkhead } from "@sluice/bulkhead"
import { RateLimiter } from "@sluice/rate-limiter"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as Api from "../Provider.js"
import { show } from "./format.js"

/**
 * A duration key. Effect's `Config.duration` reads `"-5 seconds"` as zero; a budget written with a
 * minus sign is a mistake, so it is a `ConfigError` naming the key and the value.
 */
const duration = (key: string, options: { readonly allowZero: boolean }): Config.Config<Duration.Duration> =>
  Config.string(key).pipe(Config.mapOrFail((text) => {
    const decoded = text.trim().startsWith("-") ? Option.none() : Duration.decodeUnknown(text.trim())
    const bound = options.allowZero ? "≥ 0" : "> 0"
    if (Option.isSome(decoded) && (options.allowZero || Duration.toMillis(decoded.value) > 0)) {
      return Either.right(decoded.value)
    }
    return Either.left(
      ConfigError.InvalidData([], `${key} must be a duration ${bound} such as "5 seconds", got ${show(text)}`)
    )
  }))

const number = (key: string, valid: (n: number) => boolean, rule: string): Config.Config<number> =>
  Config.number(key).pipe(
    Config.mapOrFail((n) =>
      valid(n) ? Either.right(n) : Either.left(ConfigError.InvalidData([], `${key} must be ${rule}, got ${show(n)}`))
    )
  )

const integerAtLeast = (key: string, min: number): Config.Config<number> =>
  number(key, (n) => Number.isSafeInteger(n) && n >= min, `an integer ≥ ${min}`)

const fraction = (key: string): Config.Config<number> => number(key, (n) => n >= 0 && n <= 1, "a number from 0 to 1")

const optional = <A>(config: Config.Config<A>): Config.Config<A | undefined> =>
  Config.map(Config.option(config), Option.getOrUndefined)

/**
 * An optional section: absent when none of its `keys` is set; a section set in part (say
 * `RATE_LIMIT_LIMIT` without `RATE_LIMIT_WINDOW`, or with it misspelt) is an error naming the key
 * that is missing, never a bound silently dropped.
 */
const section = <A>(
  name: string,
  config: Config.Config<A>,
  keys: ReadonlyArray<string>
): Config.Config<A | undefined> =>
  Config.nested(config, name).pipe(
    Config.orElseIf({
      if: ConfigError.isMissingDataOnly,
      orElse: () =>
        Config.nested(Config.all(keys.map((key) => Config.option(Config.string(key)))), name).pipe(
          Config.mapOrFail((values) => {
            const set = keys.filter((_, i) => Option.isSome(values[i]))
            return set.length === 0 ? Either.right(undefined) : Either.left(ConfigError.InvalidData(
              [name],
              `the section ${name} is set in part (${
                set.map((key) => `${name}_${key}`).join(", ")
              }): set its required keys too, or none of it`
            ))
          })
        )
    })
  )

const limiterKeys = ["LIMIT", "WINDOW", "BURST", "ALGORITHM", "MAX_WAIT"]

/** Backoff and retry budget, under `RETRY_`: they refine `MAX_ATTEMPTS`, and need it. */
const retryTuning = Config.nested(
  Config.all({
    initial: optional(duration("BACKOFF_INITIAL", { allowZero: true })),
    max: optional(duration("BACKOFF_MAX", { allowZero: true })),
    factor: optional(number("BACKOFF_FACTOR", (n) => n >= 1 && Number.isFinite(n), "a finite number ≥ 1")),
    jitter: optional(fraction("BACKOFF_JITTER")),
    budget: optional(Config.boolean("BUDGET")),
    ratio: optional(fraction("BUDGET_RATIO")),
    minRetries: optional(integerAtLeast("BUDGET_MIN_RETRIES", 0)),
    window: optional(duration("BUDGET_WINDOW", { allowZero: false }))
  }),
  "RETRY"
)

const retry: Config.Config<Api.RetryOptions | undefined> = Config.all({
  maxAttempts: optional(integerAtLeast("MAX_ATTEMPTS", 1)),
  tuning: retryTuning
}).pipe(Config.mapOrFail(({ maxAttempts, tuning }) => {
  const set = Object.entries(tuning).filter(([, v]) => v !== undefined).map(([k]) => k)
  if (maxAttempts === undefined) {
    return set.length === 0 ? Either.right(undefined) : Either.left(
      ConfigError.MissingData(
        ["MAX_ATTEMPTS"],
        `MAX_ATTEMPTS is missing, but RETRY_ keys are set (${set.join(", ")}): retries need MAX_ATTEMPTS`
      )
    )
  }
  const { budget, factor, initial, jitter, max, minRetries, ratio, window } = tuning
  return Either.right({
    maxAttempts,
    backoff: { initial, max, factor, jitter },
    budget: budget === false ? false as const : { ratio, minRetries, window }
  })
}))

/** @internal */
export const config: Config.Config<Api.Settings> = Config.all({
  bulkhead: Config.nested(Bulkhead.config, "BULKHEAD"),
  rateLimiter: section("RATE_LIMIT", RateLimiter.config, limiterKeys),
  attemptTimeout: optional(duration("ATTEMPT_TIMEOUT", { allowZero: false })),
  totalTimeout: optional(duration("TOTAL_TIMEOUT", { allowZero: false })),
  retry,
  consecutiveFailures: optional(integerAtLeast("CIRCUIT_CONSECUTIVE_FAILURES", 1)),
  openFor: optional(duration("CIRCUIT_OPEN_FOR", { allowZero: false })),
  gracePeriod: optional(duration("GRACE_PERIOD", { allowZero: true }))
}).pipe(
  Config.map(({ consecutiveFailures, openFor, ...rest }): Api.Settings => ({
    ...rest,
    circuitBreaker: consecutiveFailures === undefined && openFor === undefined
      ? undefined
      : { consecutiveFailures, openFor }
  }))
)
