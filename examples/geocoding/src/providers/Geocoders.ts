/**
 * The providers of the run, in order of preference, each built once for the process: its
 * `Provider` layer (bulkhead, limiter, budgets, breaker) and its HTTP client, on the one shared
 * connection pool and the rate-limiter store (memory, or Redis to share quotas across processes);
 * with Redis, each provider's bulkhead is shared by the processes too.
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import type { HttpPool } from "@sluice/http"
import type { RateLimiterStore } from "@sluice/rate-limiter"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Geocoder, Settings } from "./Geocoder.js"
import * as layers from "./layers.js"
import * as nominatim from "./nominatim.js"
import * as opencage from "./opencage.js"
import * as photon from "./photon.js"

export class Geocoders extends Context.Tag("@sluice/example-geocoding/Geocoders")<
  Geocoders,
  ReadonlyArray<Geocoder>
>() {}

const build = (settings: Settings, shared: layers.SharedBulkhead | undefined) =>
  Effect.gen(function*() {
    // `Layer.build` ties each provider to the scope of the `Geocoders` layer: built once, shut
    // down (in-flight calls given their grace period) when the run ends.
    switch (settings.name) {
      case "nominatim": {
        const context = yield* Layer.build(
          layers.layer(nominatim.NominatimProvider, nominatim.NominatimHttp, settings, shared)
        )
        return yield* Effect.provide(nominatim.make(settings), context)
      }
      case "photon": {
        const context = yield* Layer.build(layers.layer(photon.PhotonProvider, photon.PhotonHttp, settings, shared))
        return yield* Effect.provide(photon.make(settings), context)
      }
      case "opencage": {
        const context = yield* Layer.build(
          layers.layer(opencage.OpenCageProvider, opencage.OpenCageHttp, settings, shared)
        )
        return yield* Effect.provide(opencage.make(settings), context)
      }
    }
  })

export const layer = (
  settings: ReadonlyArray<Settings>,
  shared?: layers.SharedBulkhead | undefined
): Layer.Layer<
  Geocoders,
  HttpPool.PoolTooSmall,
  RateLimiterStore.RateLimiterStore | HttpPool.HttpPool | HttpClient.HttpClient
> => Layer.scoped(Geocoders, Effect.forEach(settings, (s) => build(s, shared)))
