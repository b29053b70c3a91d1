/**
 * The client's options, declared once as a schema on `@sluice/options`: `ProviderHttpClient.make`
 * decodes them and `ProviderHttpClient.config` reads the same schema, so they can never disagree.
 *
 * @internal
 */
import * as HttpMessages from "@sluice/core/HttpMessages"
import { OptionSchema } from "@sluice/options"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"

const notHttp = HttpMessages.notHttpUrl

/** @internal */
export const HttpUrl: Schema.Schema<string> = OptionSchema.make(
  Schema.String.pipe(Schema.filter((url) => notHttp(url) === undefined)),
  {
    rule: "an absolute http(s) URL",
    note: (url) => {
      const why = notHttp(url)
      return why === undefined ? "" : ` (${why})`
    },
    fromText: (text) => text
  }
)

/** A timeout: 0 would end everything at once, and infinity would hold a connection for good. */
const Timeout = OptionSchema.duration({ zero: false, infinite: false })
/** A bound on a pause, which may be none. */
const Pause = OptionSchema.duration({ zero: true, infinite: false })
const Size = OptionSchema.integer({ min: 1 })

/** @internal */
export const retryAfterDefaults = { fallbackMillis: 1_000, minMillis: 100, maxMillis: 300_000 }

/** @internal */
export const ClientOptions = Schema.Struct({
  baseUrl: HttpUrl,
  userAgent: Schema.optional(OptionSchema.string),
  maxBodySize: Schema.optional(Size),
  errorBodyLimit: Schema.optional(Size),
  retryAfter: Schema.optional(Schema.Struct({
    fallback: Schema.optional(Pause),
    min: Schema.optional(Pause),
    max: Schema.optional(Timeout)
  })),
  streamIdleTimeout: Schema.optional(Timeout),
  tracePropagation: Schema.optional(OptionSchema.boolean),
  preconnect: Schema.optional(OptionSchema.boolean),
  scheduler: Schema.optional(OptionSchema.literal("check-phase", "caller"))
}).pipe(Schema.filter(({ retryAfter }) => {
  const min = retryAfter?.min === undefined ? retryAfterDefaults.minMillis : Duration.toMillis(retryAfter.min)
  const max = retryAfter?.max === undefined ? retryAfterDefaults.maxMillis : Duration.toMillis(retryAfter.max)
  return min <= max || {
    path: ["retryAfter", "min"],
    message: `must not exceed retryAfter.max, got ${min} ms > ${max} ms`
  }
}))

/** The milliseconds of a duration option, or why it is refused: `label` names the option. */
export const durationMillis = (label: string, value: unknown, allowZero: boolean): Either.Either<number, string> =>
  Either.map(OptionSchema.decodeOption(allowZero ? Pause : Timeout, label)(value), Duration.toMillis)

/**
 * The origin of an http(s) URL (scheme, host and port), or why `url` has none.
 */
export const httpOrigin = (label: string, url: unknown): Either.Either<string, string> =>
  Either.map(OptionSchema.decodeOption(HttpUrl, label)(url), (valid) => new URL(valid).origin)
