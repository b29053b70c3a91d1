/**
 * Nominatim (`/search?format=jsonv2`): an array of places, `lat` and `lon` as strings. The public
 * instance allows 1 request per second per application and requires a User-Agent naming the
 * application and a contact (operations.osmfoundation.org/policies/nominatim).
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { ProviderHttpClient } from "@sluice/http"
import { Provider } from "@sluice/provider"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { type Geocoder, makeQuotaPause, type Settings } from "./Geocoder.js"

export class NominatimProvider extends Provider.Tag("nominatim")<NominatimProvider>() {}
export class NominatimHttp extends ProviderHttpClient.Tag("nominatim")<NominatimHttp>() {}

export const Response = Schema.Array(Schema.Struct({
  lat: Schema.NumberFromString,
  lon: Schema.NumberFromString,
  display_name: Schema.String
}))

export const make = (settings: Settings) =>
  Effect.gen(function*() {
    const http = yield* NominatimHttp
    const search = (query: string) =>
      http.json(
        HttpClientRequest.get("/search", { urlParams: { q: query, format: "jsonv2", limit: "1" } }),
        Response
      ).pipe(
        Effect.map((places) =>
          Option.map(Option.fromNullable(places[0]), (place) => ({
            lat: place.lat,
            lon: place.lon,
            displayName: place.display_name
          }))
        )
      )
    const geocoder: Geocoder = {
      name: "nominatim",
      settings,
      provider: http.provider,
      origin: http.origin,
      search: makeQuotaPause(http.provider).guard(search)
    }
    return geocoder
  })
