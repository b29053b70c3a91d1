/**
 * Photon (`/api?q=`): a GeoJSON `FeatureCollection`, coordinates `[lon, lat]`. The public instance
 * publishes no numeric limit and asks for fair use; set `--rate photon=1` against it.
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { ProviderHttpClient } from "@sluice/http"
import { Provider } from "@sluice/provider"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { type Geocoder, makeQuotaPause, type Settings } from "./Geocoder.js"

export class PhotonProvider extends Provider.Tag("photon")<PhotonProvider>() {}
export class PhotonHttp extends ProviderHttpClient.Tag("photon")<PhotonHttp>() {}

export const Response = Schema.Struct({
  type: Schema.Literal("FeatureCollection"),
  features: Schema.Array(Schema.Struct({
    geometry: Schema.Struct({ coordinates: Schema.Tuple(Schema.Number, Schema.Number) }),
    properties: Schema.Struct({
      name: Schema.optional(Schema.String),
      state: Schema.optional(Schema.String),
      country: Schema.optional(Schema.String)
    })
  }))
})

export const make = (settings: Settings) =>
  Effect.gen(function*() {
    const http = yield* PhotonHttp
    const search = (query: string) =>
      http.json(HttpClientRequest.get("/api", { urlParams: { q: query, limit: "1" } }), Response).pipe(
        Effect.map((collection) =>
          Option.map(Option.fromNullable(collection.features[0]), ({ geometry, properties }) => ({
            lat: geometry.coordinates[1],
            lon: geometry.coordinates[0],
            displayName: [properties.name, properties.state, properties.country].filter((part) => part !== undefined)
              .join(", ")
          }))
        )
      )
    const geocoder: Geocoder = {
      name: "photon",
      settings,
      provider: http.provider,
      origin: http.origin,
      search: makeQuotaPause(http.provider).guard(search)
    }
    return geocoder
  })
