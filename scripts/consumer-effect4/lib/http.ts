// A library built on @sluice/http, as a user would publish one: its declarations, emitted by tsc
// and inferred rather than annotated, name the package's types where they are declared.
import { HttpPool, Middleware, ProviderHttpClient } from "@sluice/http"
import { Provider } from "@sluice/provider"
import { Effect, Layer } from "effect"
import { HttpClientRequest } from "effect/http"

/** The provider of the library's upstream, and its HTTP client. */
export class Geo extends Provider.Tag("geo-lib")<Geo>() {}
export class GeoHttp extends ProviderHttpClient.Tag("geo-lib")<GeoHttp>() {}

/** The library's layer: the client over its provider, on one pool. */
export const GeoHttpLive = GeoHttp.layer(Geo, { baseUrl: "https://geo.example.com" }).pipe(
  Layer.provideMerge(Geo.layer({ bulkhead: { permits: 2 } })),
  Layer.provide(HttpPool.layerWithUnboundedHttpClient())
)

/** A search through the library's client, its refusals in the error channel. */
export const search = (q: string) =>
  Effect.flatMap(GeoHttp, (client) => client.text(HttpClientRequest.get(`/search?q=${encodeURIComponent(q)}`)))

/** The HttpClient service of the library's provider, for SDKs that take one. */
export const GeoClientLive = Middleware.layer(Geo, { baseUrl: "https://geo.example.com" })

/** A refusal narrowed with `instanceof`. */
export const upstreamRateLimited = <E>(error: E) =>
  error instanceof ProviderHttpClient.UpstreamRateLimited ? error : undefined
