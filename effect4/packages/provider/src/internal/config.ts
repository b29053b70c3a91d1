/** @internal */
import { Bulkhead } from "@sluice/bulkhead"
import { OptionSchema } from "@sluice/options"
import { RateLimiter } from "@sluice/rate-limiter"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Api from "../Provider.js"
import { Count, Factor, Fraction, MinRetries, Timeout, Wait } from "./options.js"

/** A key read as text and decoded through the option's own schema (see ./options.ts). */
const key = OptionSchema.configKey

const optional = <A>(config: Config.Config<A>): Config.Config<A | undefined> =>
  Config.map(Config.option(config), Option.getOrUndefined)

/** Backoff and retry budget, under `RETRY_`: they refine `MAX_ATTEMPTS`, and need it. */
const retryTuning = Config.nested(
  Config.all({
    initial: optional(key(Wait, "BACKOFF_INITIAL")),
    max: optional(key(Wait, "BACKOFF_MAX")),
    factor: optional(key(Factor, "BACKOFF_FACTOR")),
    jitter: optional(key(Fraction, "BACKOFF_JITTER")),
    budget: optional(key(OptionSchema.boolean, "BUDGET")),
    ratio: optional(key(Fraction, "BUDGET_RATIO")),
    minRetries: optional(key(MinRetries, "BUDGET_MIN_RETRIES")),
    window: optional(key(Timeout, "BUDGET_WINDOW"))
  }),
  "RETRY"
)

const retry: Config.Config<Api.RetryOptions | undefined> = Config.all({
  maxAttempts: optional(key(Count, "MAX_ATTEMPTS")),
  tuning: retryTuning
}).pipe(Config.mapEffect(({ maxAttempts, tuning }) => {
  const set = Object.entries(tuning).filter(([, v]) => v !== undefined).map(([k]) => k)
  if (maxAttempts === undefined) {
    return set.length === 0 ? Effect.succeed(undefined) : Effect.fail(
      new Config.ConfigError(
        new ConfigProvider.SourceError({
          message: `MAX_ATTEMPTS is missing, but RETRY_ keys are set (${set.join(", ")}): retries need MAX_ATTEMPTS`
        })
      )
    )
  }
  const { budget, factor, initial, jitter, max, minRetries, ratio, window } = tuning
  return Effect.succeed({
    maxAttempts,
    backoff: { initial, max, factor, jitter },
    budget: budget === false ? false as const : { ratio, minRetries, window }
  })
}))

/** @internal */
export const config: Config.Config<Api.Settings> = Config.all({
  bulkhead: Config.nested(Bulkhead.config, "BULKHEAD"),
  // the limiter's own Config: absent when none of its keys is set, an error naming the missing
  // key when it is set in part. Nested as RATE, then LIMIT: Effect 4's environment provider splits
  // names on "_", so a section named "RATE_LIMIT" would never be found
  rateLimiter: optional(Config.nested(Config.nested(RateLimiter.config, "LIMIT"), "RATE")),
  attemptTimeout: optional(key(Timeout, "ATTEMPT_TIMEOUT")),
  totalTimeout: optional(key(Timeout, "TOTAL_TIMEOUT")),
  retry,
  consecutiveFailures: optional(key(Count, "CIRCUIT_CONSECUTIVE_FAILURES")),
  openFor: optional(key(Timeout, "CIRCUIT_OPEN_FOR")),
  gracePeriod: optional(key(Wait, "GRACE_PERIOD")),
  recording: optional(key(OptionSchema.boolean, "RECORDING"))
}).pipe(
  Config.map(({ consecutiveFailures, openFor, ...rest }): Api.Settings => ({
    ...rest,
    circuitBreaker: consecutiveFailures === undefined && openFor === undefined
      ? undefined
      : { consecutiveFailures, openFor }
  }))
)
