import type { RetryAfterBounds } from "@sluice/core/RetryAfter"
import { OptionSchema } from "@sluice/options"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import type * as Scheduler from "effect/Scheduler"
import type * as Api from "../ProviderHttpClient.js"
import { checkPhase } from "./checkPhase.js"
import { ClientOptions, retryAfterDefaults } from "./options.js"

/** @internal */
export const DEFAULT_USER_AGENT = "sluice-http/0.1.0"
const KiB = 1024
/** Large enough for any geocoding or JSON API answer; a body past it is a bug or an attack. */
const DEFAULT_MAX_BODY = 8 * 1024 * KiB
/** Reading up to this much of an error body keeps the connection reusable; past it, aborting is cheaper. */
const DEFAULT_ERROR_BODY_LIMIT = 64 * KiB

/** @internal */
export interface Settings {
  readonly origin: string
  readonly maxBodySize: number
  readonly errorBodyLimit: number
  readonly retryAfter: RetryAfterBounds
  readonly idleTimeout: Duration.Duration
  /** The scheduler calls run on; `undefined`: the caller's. */
  readonly scheduler: Scheduler.Scheduler | undefined
}

/** Keys a client takes as given: the headers and the functions it calls. */
const clientGiven = ["headers", "estimate", "usage", "rateLimitHeaders", "idempotent", "streamed"]

/**
 * The options checked, defaults filled in: `Left` says what is wrong, naming the provider, the
 * option and the value.
 *
 * @internal
 */
export const check = (provider: string, options: Api.Options): Either.Either<Settings, string> =>
  Either.map(
    OptionSchema.decodeEither(
      ClientOptions,
      `http client of provider ${OptionSchema.show(provider)}`,
      clientGiven
    )(options),
    (checked) => {
      const millis = (d: Duration.Duration | undefined, fallback: number) =>
        d === undefined ? fallback : Duration.toMillis(d)
      return {
        origin: new URL(checked.baseUrl).origin,
        maxBodySize: checked.maxBodySize ?? DEFAULT_MAX_BODY,
        errorBodyLimit: checked.errorBodyLimit ?? DEFAULT_ERROR_BODY_LIMIT,
        retryAfter: {
          fallbackMillis: millis(checked.retryAfter?.fallback, retryAfterDefaults.fallbackMillis),
          minMillis: millis(checked.retryAfter?.min, retryAfterDefaults.minMillis),
          maxMillis: millis(checked.retryAfter?.max, retryAfterDefaults.maxMillis)
        },
        idleTimeout: checked.streamIdleTimeout ?? Duration.seconds(30),
        scheduler: checked.scheduler === "caller" ? undefined : checkPhase
      }
    }
  )
