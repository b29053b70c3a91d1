/**
 * The stand-ins of a run, each on its own loopback port (one origin per provider, as with the real
 * services): their server options from a provider's profile, and their figures at the end. They are
 * started by `Offline.prepare` (harness/Offline.ts), in this process or in a child (see Child.ts).
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { ProviderName } from "../src/providers/Geocoder.js"
import type { Profile } from "../src/Scenario.js"
import type * as StandIn from "./StandIn.js"

/**
 * The offline demo: three quotas whose sum (350/s) geocodes the 5,000-row sample (about 2,900
 * distinct queries) in about 9 s, with latencies in the range of the real services.
 */
export const profiles: Record<ProviderName, Profile> = {
  opencage: { rate: 200, medianMillis: 40, p95Millis: 80 },
  photon: { rate: 100, medianMillis: 60, p95Millis: 120 },
  nominatim: { rate: 50, medianMillis: 80, p95Millis: 160 }
}

export interface Options {
  readonly profile: Profile
  readonly burst: number
  /** Requests in progress the server accepts. */
  readonly concurrency: number
  readonly faults?: StandIn.Faults | undefined
  readonly quota?: StandIn.Options["quota"]
  readonly apiKey?: string | undefined
  readonly port?: number | undefined
  readonly seed: number
}

/** A stand-in's server options; plain data (durations in milliseconds), so a child process can take them too. */
export const optionsFor = (name: ProviderName, options: Options): StandIn.Options => ({
  format: name,
  port: options.port,
  limit: options.profile.rate,
  window: 1_000,
  burst: options.burst,
  concurrency: options.concurrency,
  latency: { median: options.profile.medianMillis, p95: options.profile.p95Millis },
  quota: options.quota === undefined
    ? undefined
    : { requests: options.quota.requests, period: Duration.toMillis(options.quota.period) },
  apiKey: options.apiKey,
  faults: options.faults,
  seed: options.seed
})

export type { StandIn } from "./StandIn.js"

/**
 * Server-side figures of every stand-in, for the end of a run, with what its window admits:
 * `limit + burst` arrivals (the burst as the stand-in applies it, 1 by default).
 */
export const statsOf = (standIns: ReadonlyArray<StandIn.StandIn>) =>
  Effect.forEach(standIns, (standIn) =>
    Effect.map(standIn.stats, (stats) => ({
      name: standIn.format,
      limit: standIn.options.limit,
      burst: standIn.options.burst ?? 1,
      ...stats
    })))
