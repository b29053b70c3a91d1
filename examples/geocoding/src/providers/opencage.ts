/**
 * OpenCage (`/geocode/v1/json?q=&key=`): an envelope whose `status.code` mirrors the HTTP status,
 * with the account's `rate` on trial plans. 402 means the period's quota is spent (it resets at
 * midnight UTC, or at `rate.reset`): the provider is paused until then, never retried.
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { ProviderHttpClient } from "@sluice/http"
import { Provider } from "@sluice/provider"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { type Geocoder, makeQuotaPause, nextMidnightUtc, QuotaExhausted, type Settings } from "./Geocoder.js"

export class OpenCageProvider extends Provider.Tag("opencage")<OpenCageProvider>() {}
export class OpenCageHttp extends ProviderHttpClient.Tag("opencage")<OpenCageHttp>() {}

const Rate = Schema.Struct({ limit: Schema.Number, remaining: Schema.Number, reset: Schema.Number })

export const Response = Schema.Struct({
  status: Schema.Struct({ code: Schema.Number, message: Schema.String }),
  rate: Schema.optional(Rate),
  results: Schema.Array(Schema.Struct({
    formatted: Schema.String,
    geometry: Schema.Struct({ lat: Schema.Number, lng: Schema.Number })
  }))
})

/** The reset a 402 body announces (its `rate.reset`, UNIX seconds), if its excerpt holds one. */
const resetOf = (body: string): number | undefined => {
  const match = /"reset"\s*:\s*(\d+)/.exec(body)
  return match === null ? undefined : Number(match[1]) * 1000
}

export const make = (settings: Settings) =>
  Effect.gen(function*() {
    const http = yield* OpenCageHttp
    const pause = makeQuotaPause(http.provider)
    const key = settings.apiKey === undefined ? "" : Redacted.value(settings.apiKey)
    const search = (query: string) =>
      http.json(
        // the key goes in `urlParams`, which error messages leave out
        HttpClientRequest.get("/geocode/v1/json", { urlParams: { q: query, key, limit: "1", no_annotations: "1" } }),
        Response
      ).pipe(
        Effect.catchIf(
          (error): error is ProviderHttpClient.UpstreamStatus =>
            error instanceof ProviderHttpClient.UpstreamStatus && error.status === 402,
          (error) =>
            Effect.flatMap(
              Clock.currentTimeMillis,
              (now) =>
                new QuotaExhausted({ provider: "opencage", resetAt: resetOf(error.body) ?? nextMidnightUtc(now) })
            )
        ),
        // the last request of the period was answered: pause before the next one earns a 402
        Effect.tap((body) =>
          body.rate !== undefined && body.rate.remaining === 0 ? pause.pauseUntil(body.rate.reset * 1000) : Effect.void
        ),
        Effect.map((body) =>
          Option.map(Option.fromNullable(body.results[0]), (result) => ({
            lat: result.geometry.lat,
            lon: result.geometry.lng,
            displayName: result.formatted
          }))
        )
      )
    const geocoder: Geocoder = {
      name: "opencage",
      settings,
      provider: http.provider,
      origin: http.origin,
      search: pause.guard(search)
    }
    return geocoder
  })
