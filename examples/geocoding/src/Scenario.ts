/**
 * The providers of a run and how each is configured: the stand-ins' profiles for the offline demo,
 * the real endpoints' defaults, and `settingsFor`, which sizes each provider's bulkhead from its
 * rate and median latency (Little's law) and keeps the derivation next to the value.
 */
import { Sizing } from "@sluice/provider"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import type * as Redacted from "effect/Redacted"
import { type ProviderName, providerNames, type Settings } from "./providers/Geocoder.js"

export { providerNames }
export type { ProviderName }

export interface Profile {
  /** Requests per second. */
  readonly rate: number
  readonly medianMillis: number
  readonly p95Millis: number
}

/**
 * The offline demo: three quotas whose sum (350/s) geocodes the 5,000-row sample (about 2,900
 * distinct queries) in about 9 s, with latencies in the range of the real services.
 */
export const standInProfiles: Record<ProviderName, Profile> = {
  opencage: { rate: 200, medianMillis: 40, p95Millis: 80 },
  photon: { rate: 100, medianMillis: 60, p95Millis: 120 },
  nominatim: { rate: 50, medianMillis: 80, p95Millis: 160 }
}

/** The real services: their public base URLs and published (or fair-use) rates. */
export const realEndpoints: Record<ProviderName, { readonly baseUrl: string } & Profile> = {
  // usage policy: an absolute maximum of 1 request per second, a User-Agent with a contact
  nominatim: { baseUrl: "https://nominatim.openstreetmap.org", rate: 1, medianMillis: 400, p95Millis: 1500 },
  // no published number, "extensive usage will be throttled": 1/s is the polite figure
  photon: { baseUrl: "https://photon.komoot.io", rate: 1, medianMillis: 300, p95Millis: 1000 },
  // free trial: 1 request per second, 2,500 per day
  opencage: { baseUrl: "https://api.opencagedata.com", rate: 1, medianMillis: 300, p95Millis: 1000 }
}

export interface Tuning {
  readonly burst: number
  readonly margin: number
  /** Bulkhead permits over the required figure (rate × median latency). */
  readonly headroom: number
  readonly userAgent: string
  readonly apiKey?: Redacted.Redacted<string> | undefined
}

export const defaultUserAgent = (contact: string) =>
  `sluice-geocoding-example/0.1 (https://github.com/sluice-ts/sluice; ${contact})`

export const settingsFor = (
  name: ProviderName,
  endpoint: { readonly baseUrl: string; readonly rate: number; readonly medianMillis: number },
  tuning: Tuning,
  permits: number | undefined
): Settings => {
  const clientRate = endpoint.rate * (1 - tuning.margin)
  const sizing = Either.getOrThrow(Sizing.permits({
    rate: clientRate,
    medianLatency: Duration.millis(endpoint.medianMillis),
    headroom: tuning.headroom
  }))
  const chosen = permits ?? sizing.permits
  // A bulkhead's queue as long as its permits: a provider that slows holds at most twice its
  // permits in workers, and the rest of the batch flows to the others at once (BulkheadFull).
  return {
    name,
    baseUrl: endpoint.baseUrl,
    rate: endpoint.rate,
    burst: tuning.burst,
    margin: tuning.margin,
    permits: chosen,
    permitsReason: permits === undefined ? sizing.derivation : `set by --permits; sizing says ${sizing.derivation}`,
    maxWaiting: chosen,
    permitMaxWait: "5 seconds",
    limiterMaxWait: "5 seconds",
    attemptTimeout: "3 seconds",
    totalTimeout: "12 seconds",
    userAgent: tuning.userAgent,
    apiKey: tuning.apiKey
  }
}

/** Worker fibers: every permit busy, plus half of the bulkhead queues, so that every provider has lookups queued. */
export const workersFor = (settings: ReadonlyArray<Settings>): number =>
  Math.max(1, Math.ceil(settings.reduce((sum, s) => sum + s.permits + s.maxWaiting / 2, 0)))
