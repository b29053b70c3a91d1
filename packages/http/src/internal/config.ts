import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as Api from "../ProviderHttpClient.js"
import { durationMillis, httpOrigin, positiveInteger } from "./options.js"

const keys = {
  baseUrl: Config.option(Config.string("BASE_URL")),
  userAgent: Config.option(Config.string("USER_AGENT")),
  maxBodySize: Config.option(Config.integer("MAX_BODY_SIZE")),
  errorBodyLimit: Config.option(Config.integer("ERROR_BODY_LIMIT")),
  // durations as text: Effect's Config.duration reads "-5 seconds" as 0, and an option refuses it
  retryAfterFallback: Config.option(Config.string("RETRY_AFTER_FALLBACK")),
  retryAfterMin: Config.option(Config.string("RETRY_AFTER_MIN")),
  retryAfterMax: Config.option(Config.string("RETRY_AFTER_MAX")),
  streamIdleTimeout: Config.option(Config.string("STREAM_IDLE_TIMEOUT")),
  tracePropagation: Config.option(Config.boolean("TRACE_PROPAGATION")),
  preconnect: Config.option(Config.boolean("PRECONNECT"))
}

const names: { readonly [K in keyof typeof keys]: string } = {
  baseUrl: "BASE_URL",
  userAgent: "USER_AGENT",
  maxBodySize: "MAX_BODY_SIZE",
  errorBodyLimit: "ERROR_BODY_LIMIT",
  retryAfterFallback: "RETRY_AFTER_FALLBACK",
  retryAfterMin: "RETRY_AFTER_MIN",
  retryAfterMax: "RETRY_AFTER_MAX",
  streamIdleTimeout: "STREAM_IDLE_TIMEOUT",
  tracePropagation: "TRACE_PROPAGATION",
  preconnect: "PRECONNECT"
}

type Raw = { readonly [K in keyof typeof keys]: Config.Config.Success<(typeof keys)[K]> }

/** An optional value checked by `f`, its refusal an InvalidData at `key`. */
const checked = <A, B>(
  key: string,
  value: Option.Option<A>,
  f: (value: A) => Either.Either<B, string>
): Either.Either<B | undefined, ConfigError.ConfigError> =>
  Option.match(value, {
    onNone: () => Either.right(undefined),
    onSome: (a) => Either.mapLeft(f(a), (why) => ConfigError.InvalidData([key], why))
  })

const duration = (key: string, value: Option.Option<string>, allowZero: boolean) =>
  checked(key, value, (text) => Either.map(durationMillis(key, text, allowZero), Duration.millis))

const options = (raw: Raw): Either.Either<Api.Options, ConfigError.ConfigError> =>
  Either.gen(function*() {
    if (Option.isNone(raw.baseUrl)) {
      const present = (Object.keys(names) as Array<keyof typeof names>).filter((k) => {
        const value: Option.Option<unknown> = raw[k]
        return Option.isSome(value)
      })
      // a wholly absent section is "not configured" (MissingData, which Config.option reads as
      // none); one set in part is a mistake, and no Config.option may hide it
      return yield* Either.left(
        present.length === 0
          ? ConfigError.MissingData([names.baseUrl], `Expected ${names.baseUrl} to exist`)
          : ConfigError.InvalidData(
            [names.baseUrl],
            `${names.baseUrl} is missing, while ${present.map((k) => names[k]).join(", ")} ${
              present.length === 1 ? "is" : "are"
            } set: the client is configured in part`
          )
      )
    }
    const baseUrl = raw.baseUrl.value
    yield* checked(names.baseUrl, raw.baseUrl, (url) => httpOrigin(names.baseUrl, url))
    const retryAfter = {
      fallback: yield* duration(names.retryAfterFallback, raw.retryAfterFallback, true),
      min: yield* duration(names.retryAfterMin, raw.retryAfterMin, true),
      max: yield* duration(names.retryAfterMax, raw.retryAfterMax, false)
    }
    if (
      retryAfter.min !== undefined && retryAfter.max !== undefined &&
      Duration.greaterThan(retryAfter.min, retryAfter.max)
    ) {
      return yield* Either.left(
        ConfigError.InvalidData(
          [names.retryAfterMin],
          `${names.retryAfterMin} must not exceed ${names.retryAfterMax}, got ${
            Option.getOrElse(raw.retryAfterMin, () => "")
          } > ${Option.getOrElse(raw.retryAfterMax, () => "")}`
        )
      )
    }
    return {
      baseUrl,
      userAgent: Option.getOrUndefined(raw.userAgent),
      maxBodySize: yield* checked(names.maxBodySize, raw.maxBodySize, (n) => positiveInteger(names.maxBodySize, n)),
      errorBodyLimit: yield* checked(
        names.errorBodyLimit,
        raw.errorBodyLimit,
        (n) => positiveInteger(names.errorBodyLimit, n)
      ),
      retryAfter,
      streamIdleTimeout: yield* duration(names.streamIdleTimeout, raw.streamIdleTimeout, false),
      tracePropagation: Option.getOrUndefined(raw.tracePropagation),
      preconnect: Option.getOrUndefined(raw.preconnect)
    }
  })

/** @internal */
export const config: Config.Config<Api.Options> = Config.mapOrFail(Config.all(keys), options)
