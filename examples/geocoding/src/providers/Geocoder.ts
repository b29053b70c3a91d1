/**
 * What the pipeline sees of a provider: a name, its quota, and `search`, which answers a place or
 * nothing, or fails with one of the typed refusals of the provider, its HTTP client, or an exhausted
 * quota. The adapters (nominatim.ts, photon.ts, opencage.ts) turn each provider's format into this.
 */
import type { ProviderHttpClient } from "@sluice/http"
import type { Provider } from "@sluice/provider"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"

export const providerNames = ["opencage", "photon", "nominatim"] as const

export type ProviderName = typeof providerNames[number]

export interface Place {
  readonly lat: number
  readonly lon: number
  readonly displayName: string
}

/**
 * The provider's quota for the period is spent (OpenCage answers 402, or reported 0 remaining):
 * nothing is sent to it until `resetAt`, and every caller moves on to the next provider.
 */
export class QuotaExhausted extends Data.TaggedError("QuotaExhausted")<{
  readonly provider: string
  /** UNIX milliseconds. */
  readonly resetAt: number
}> {
  override get message(): string {
    return `provider "${this.provider}" has spent its quota; paused until ${new Date(this.resetAt).toISOString()}`
  }
}

export type SearchError = Provider.ProviderError | ProviderHttpClient.HttpError | QuotaExhausted

export interface Geocoder {
  readonly name: ProviderName
  readonly settings: Settings
  readonly provider: Provider.Provider
  /** The origin of its base URL: where its latency is recorded. */
  readonly origin: string
  readonly search: (query: string) => Effect.Effect<Option.Option<Place>, SearchError>
}

/** One provider's configuration, the stand-in's and the real one's alike. */
export interface Settings {
  readonly name: ProviderName
  readonly baseUrl: string
  /** The provider's quota, requests per second. The client keeps `margin` under it. */
  readonly rate: number
  /** Starts allowed at the same instant, on the client and on the stand-in. */
  readonly burst: number
  /** Why `burst` has its value: derived from the client rate, a real service's none, or "set by --burst". */
  readonly burstReason: string
  /** The share of the quota left unused, so that arrival jitter does not cross it. */
  readonly margin: number
  readonly permits: number
  /** Why `permits` has its value: the sizing's derivation, or "set by --permits". */
  readonly permitsReason: string
  readonly maxWaiting: number
  readonly permitMaxWait: Duration.DurationInput
  readonly limiterMaxWait: Duration.DurationInput
  readonly attemptTimeout: Duration.DurationInput
  readonly totalTimeout: Duration.DurationInput
  readonly userAgent: string
  readonly apiKey?: Redacted.Redacted<string> | undefined
}

/** The rate the client keeps to, requests per second: the quota less the margin. */
export const clientRate = (settings: Settings): number => settings.rate * (1 - settings.margin)

/**
 * The client's limit: the quota less the margin, counted over a hundred seconds so that a
 * fractional rate stays exact to 0.01/s (Nominatim's 1/s less 2 % is 98 per 100 s, evenly spaced;
 * over ten seconds it would round down to 9, 8 % under). A GCRA limit's window sets only the
 * spacing of starts (window ÷ limit); the burst is set on its own.
 */
export const clientLimit = (settings: Settings): { readonly limit: number; readonly window: Duration.Duration } => ({
  limit: Math.max(1, Math.floor(clientRate(settings) * 100)),
  window: Duration.seconds(100)
})

/**
 * The provider's quota pause. `guard` wraps a search: while paused it fails at once (no request,
 * no permit), and a `QuotaExhausted` from the provider starts the pause. `pauseUntil` starts it
 * too; it also pauses the provider's rate limiter, which the Redis store shares with every process.
 */
export const makeQuotaPause = (provider: Provider.Provider) => {
  let pausedUntil = 0
  const pauseUntil = (resetAt: number): Effect.Effect<void> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      if (resetAt <= pausedUntil) return Effect.void
      pausedUntil = resetAt
      return provider.rateLimiter === undefined
        ? Effect.void
        : Effect.ignore(provider.rateLimiter.pauseFor(Duration.millis(Math.max(0, resetAt - now))))
    })
  const guard = (
    search: (query: string) => Effect.Effect<Option.Option<Place>, SearchError>
  ) =>
  (query: string): Effect.Effect<Option.Option<Place>, SearchError> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      now < pausedUntil
        ? new QuotaExhausted({ provider: provider.name, resetAt: pausedUntil })
        : search(query).pipe(
          Effect.tapError((error) => error._tag === "QuotaExhausted" ? pauseUntil(error.resetAt) : Effect.void)
        ))
  return { guard, pauseUntil } as const
}

/** The next midnight UTC, when OpenCage resets a daily quota that did not say when. */
export const nextMidnightUtc = (now: number): number => {
  const date = new Date(now)
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1)
}
