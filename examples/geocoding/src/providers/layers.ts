/**
 * The sluice layers of one provider: its `Provider` (bulkhead → rate limiter → attempt timeout,
 * retries, circuit breaker) and its HTTP client over it, built once for the process from `Settings`.
 */
import type { Bulkhead } from "@sluice/bulkhead"
import { ProviderHttpClient } from "@sluice/http"
import type { Provider } from "@sluice/provider"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { clientLimit, type Settings } from "./Geocoder.js"

/**
 * The retries on the same provider: only a 429, which paused the provider's limiter for everyone
 * first. Anything else goes to the next provider at once: a fallback costs less than a retry
 * against a provider that just failed.
 */
const isRetryable = (error: unknown): boolean => error instanceof ProviderHttpClient.UpstreamRateLimited

/** 429s and 5xx are the upstream pushing back: what the verdict calls `upstream`. */
const isUpstreamError = (error: unknown): boolean =>
  error instanceof ProviderHttpClient.UpstreamRateLimited ||
  (error instanceof ProviderHttpClient.UpstreamStatus && error.status >= 500)

export const providerSettings = (settings: Settings) => {
  const { limit, window } = clientLimit(settings)
  return {
    bulkhead: { permits: settings.permits, maxWaiting: settings.maxWaiting, maxWait: settings.permitMaxWait },
    rateLimiter: { limit, window, burst: settings.burst, maxWait: settings.limiterMaxWait },
    attemptTimeout: settings.attemptTimeout,
    totalTimeout: settings.totalTimeout,
    retry: { maxAttempts: 2, isRetryable, budget: { ratio: 0.1, minRetries: 3 } },
    circuitBreaker: { consecutiveFailures: 5, openFor: "5 seconds" },
    isUpstreamError,
    sampleSize: 4_096,
    // for the run report (--report): quarter seconds show a 429's pause and a burst's shape
    recording: { bucket: "250 millis" },
    gracePeriod: "2 seconds"
  } as const
}

/**
 * A provider's bulkhead shared by every process of the run (`--redis`): its `permits` bound the
 * fleet, not each process. Without it, each process builds its own from the settings.
 */
export type SharedBulkhead = (settings: Settings) => Effect.Effect<Bulkhead.Bulkhead, never, Scope.Scope>

/** The provider and its HTTP client, both provided: the adapters need the client, the report the provider. */
export const layer = <P, H>(
  providerTag: Provider.TagClass<P, string>,
  httpTag: ProviderHttpClient.TagClass<H, string> & Context.Tag<H, ProviderHttpClient.ProviderHttpClient>,
  settings: Settings,
  shared: SharedBulkhead | undefined
) =>
  // the connections open before the batch's clock starts, as its input file does: the first calls
  // go out on the limiter's schedule, not a handshake later each
  httpTag.layer(providerTag, { baseUrl: settings.baseUrl, userAgent: settings.userAgent, preconnect: true }).pipe(
    Layer.provideMerge(
      shared === undefined
        ? providerTag.layer(providerSettings(settings))
        : Layer.unwrapScoped(Effect.map(
          shared(settings),
          (bulkhead) => providerTag.layer({ ...providerSettings(settings), bulkhead })
        ))
    )
  )
