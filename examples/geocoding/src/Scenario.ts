/**
 * The providers of a run and how each is configured: the real endpoints' defaults, and
 * `settingsFor`, which sizes each provider's bulkhead from its rate and median latency (Little's
 * law) and keeps the derivation next to the value.
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

/** The real services: their public base URLs and published (or fair-use) rates. */
export const realEndpoints: Record<ProviderName, { readonly baseUrl: string } & Profile> = {
  // usage policy: an absolute maximum of 1 request per second, a User-Agent with a contact
  nominatim: { baseUrl: "https://nominatim.openstreetmap.org", rate: 1, medianMillis: 400, p95Millis: 1500 },
  // no published number, "extensive usage will be throttled": 1/s is the polite figure
  photon: { baseUrl: "https://photon.komoot.io", rate: 1, medianMillis: 300, p95Millis: 1000 },
  // free trial: 1 request per second, 2,500 per day
  opencage: { baseUrl: "https://api.opencagedata.com", rate: 1, medianMillis: 300, p95Millis: 1000 }
}

/**
 * The limiter paces actual starts: after a late timer it lets at most `burst` start at once (its
 * documented "never more than `burst` bunch"), so on an event loop whose turns take L ms it starts
 * at most burst / L per second, whatever its rate. Node's timers fire in whole milliseconds, so a
 * limiter above 1,000/s needs burst ≥ rate × 1 ms just to reach its rate; to keep it while the loop
 * is busy, burst ≥ rate × the lag; 20 ms covers most of the client's long turns (the measurements
 * are in docs/guides/comparison.md, "Geocoding: how the figures were reached"). The stand-ins admit
 * the same burst over their quota, so the margin, not the burst, is what absorbs arrival jitter.
 * Longer stalls cost that provider throughput, never quota. The floor of 3 also absorbs a late
 * timer of up to two emission intervals.
 */
export const STAND_IN_LAG_MILLIS = 20
export const MIN_STAND_IN_BURST = 3
/** Real services publish limits such as "an absolute maximum of 1 request per second": no burst. */
export const REAL_SERVICE_BURST = 1

export interface Burst {
  readonly burst: number
  /** Why `burst` has its value, as the report and `serve` print it. */
  readonly reason: string
}

/**
 * The burst of a provider's client limiter. A stand-in admits the same burst over its quota (a
 * sliding log of `limit + burst` per second), so the client's `rate × (1 − margin) + burst` per
 * window stays `rate × margin` under what it admits, whatever the burst.
 */
export const burstFor = (
  where: "stand-in" | "real",
  clientRate: number,
  override: number | undefined
): Burst => {
  if (override !== undefined) return { burst: override, reason: "set by --burst" }
  if (where === "real") return { burst: REAL_SERVICE_BURST, reason: "a real service's published limit admits none" }
  const exact = clientRate * STAND_IN_LAG_MILLIS / 1000
  const sized = Math.ceil(exact)
  return {
    burst: Math.max(MIN_STAND_IN_BURST, sized),
    reason: `max(${MIN_STAND_IN_BURST}, client rate ${Number(clientRate.toFixed(1))}/s × ${STAND_IN_LAG_MILLIS} ms ` +
      `of loop lag = ${Number(exact.toFixed(2))}${sized === exact ? "" : `, rounded up to ${sized}`})`
  }
}

export interface Tuning {
  /** `--burst`, for this provider; else `burstFor` decides. */
  readonly burst: number | undefined
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
  endpoint: {
    readonly baseUrl: string
    readonly rate: number
    readonly medianMillis: number
    readonly where: "stand-in" | "real"
  },
  tuning: Tuning,
  permits: number | undefined
): Either.Either<Settings, Sizing.InvalidSizing> => {
  const clientRate = endpoint.rate * (1 - tuning.margin)
  return Either.map(
    Sizing.permits({
      rate: clientRate,
      medianLatency: Duration.millis(endpoint.medianMillis),
      headroom: tuning.headroom
    }),
    (sizing) => sized(name, endpoint, tuning, permits, clientRate, sizing)
  )
}

const sized = (
  name: ProviderName,
  endpoint: { readonly baseUrl: string; readonly rate: number; readonly where: "stand-in" | "real" },
  tuning: Tuning,
  permits: number | undefined,
  clientRate: number,
  sizing: Sizing.Sizing
): Settings => {
  const chosen = permits ?? sizing.permits
  const burst = burstFor(endpoint.where, clientRate, tuning.burst)
  // A bulkhead's queue as long as its permits: a provider that slows holds at most twice its
  // permits in workers, and the rest of the batch flows to the others at once (BulkheadFull).
  return {
    name,
    baseUrl: endpoint.baseUrl,
    rate: endpoint.rate,
    burst: burst.burst,
    burstReason: burst.reason,
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
