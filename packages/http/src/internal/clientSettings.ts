import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import type * as Api from "../ProviderHttpClient.js"
import { durationMillis, httpOrigin, positiveInteger } from "./options.js"
import type { RetryAfterBounds } from "./retryAfter.js"

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
}

/**
 * The options checked, defaults filled in: `Left` says what is wrong, naming the option and value.
 *
 * @internal
 */
export const check = (options: Api.Options): Either.Either<Settings, string> =>
  Either.gen(function*() {
    const optional = <A>(value: unknown, fallback: A, f: (value: unknown) => Either.Either<A, string>) =>
      value === undefined ? Either.right(fallback) : f(value)
    const origin = yield* httpOrigin("baseUrl", options.baseUrl)
    const retryAfter = {
      fallbackMillis: yield* optional(
        options.retryAfter?.fallback,
        1_000,
        (v) => durationMillis("retryAfter.fallback", v, true)
      ),
      minMillis: yield* optional(options.retryAfter?.min, 100, (v) => durationMillis("retryAfter.min", v, true)),
      maxMillis: yield* optional(options.retryAfter?.max, 300_000, (v) => durationMillis("retryAfter.max", v, false))
    }
    if (retryAfter.minMillis > retryAfter.maxMillis) {
      return yield* Either.left(
        `retryAfter.min must not exceed retryAfter.max, got ${retryAfter.minMillis} ms > ${retryAfter.maxMillis} ms`
      )
    }
    return {
      origin,
      maxBodySize: yield* optional(options.maxBodySize, DEFAULT_MAX_BODY, (v) => positiveInteger("maxBodySize", v)),
      errorBodyLimit: yield* optional(
        options.errorBodyLimit,
        DEFAULT_ERROR_BODY_LIMIT,
        (v) => positiveInteger("errorBodyLimit", v)
      ),
      retryAfter,
      idleTimeout: Duration.millis(
        yield* optional(options.streamIdleTimeout, 30_000, (v) => durationMillis("streamIdleTimeout", v, false))
      )
    }
  })
