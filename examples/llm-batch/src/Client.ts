/**
 * The client: Effect's own `@effect/ai-openai` over a sluice provider. `OpenAiClient` asks for an
 * `HttpClient`; the one given here sends every request through the provider's `ProviderHttpClient`
 * (bulkhead → rate limiter → attempt timeout → the call, its body read inside the permit), so the
 * OpenAI client's typed API and sluice's bounds compose without either knowing the other.
 */
import * as OpenAiClient from "@effect/ai-openai/OpenAiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { HttpPool, ProviderHttpClient } from "@sluice/http"
import { Provider } from "@sluice/provider"
import { RateLimiter } from "@sluice/rate-limiter"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import * as Tokens from "./Tokens.js"

export class OpenAi extends Provider.Tag("openai")<OpenAi>() {}
export class OpenAiHttp extends ProviderHttpClient.Tag("openai")<OpenAiHttp>() {}

/** Requests and tokens per window: the quotas of an OpenAI organisation (per minute there). */
export interface Quotas {
  readonly windowMillis: number
  readonly requests: { readonly limit: number; readonly burst: number }
  readonly tokens: { readonly limit: number; readonly burst: number }
}

export interface Settings {
  /** Up to and including `/v1`: `https://api.openai.com/v1`, or the stand-in's. */
  readonly baseUrl: string
  readonly apiKey: Redacted.Redacted
  readonly quotas: Quotas
  /** The share the client stays under each quota, against arrival jitter between client and server. */
  readonly margin: number
  /** Calls in flight at once. */
  readonly permits: number
  readonly maxTokens: number
  /** The completion length an estimate assumes (default `maxTokens`, which never falls short). */
  readonly expectedCompletion?: number | undefined
}

/** A quota as the client keeps it: `margin` under the server's limit, the same burst. */
export const clientLimit = (quota: { readonly limit: number; readonly burst: number }, margin: number) => ({
  limit: Math.max(1, Math.floor(quota.limit * (1 - margin))),
  burst: quota.burst
})

/** What a chat-completion request will cost: one request, and its prompt plus the completion expected. */
export const estimateOf = (
  request: HttpClientRequest.HttpClientRequest,
  settings: Pick<Settings, "maxTokens" | "expectedCompletion">
): { readonly requests: number; readonly tokens: number } => {
  const body = request.body
  if (body._tag !== "Uint8Array") return { requests: 1, tokens: settings.maxTokens }
  const chat = JSON.parse(new TextDecoder().decode(body.body)) as {
    readonly messages?: ReadonlyArray<Tokens.Message>
    readonly max_tokens?: number
  }
  return {
    requests: 1,
    tokens: Tokens.estimate(chat.messages ?? [], chat.max_tokens ?? settings.maxTokens, settings.expectedCompletion)
  }
}

/**
 * A sluice refusal (`RateLimitExceeded`, `UpstreamRateLimited`, `CallTimeout`...) carried through
 * the OpenAI client, whose requests can fail only with an `HttpClientError`: it travels as the
 * `cause` of a `RequestError`, and `refusalOf` gets it back.
 */
const asHttpClientError = (request: HttpClientRequest.HttpClientRequest) => (error: unknown) =>
  HttpClientError.isHttpClientError(error) ? error : new HttpClientError.RequestError({
    request,
    reason: "Transport",
    cause: error,
    description: Predicate.hasProperty(error, "message") ? String(error.message) : String(error)
  })

/** The sluice refusal behind a failed OpenAI call, when there is one: its tag names it. */
export const refusalOf = (error: unknown): Option.Option<{ readonly _tag: string; readonly message: string }> => {
  const cause = Predicate.hasProperty(error, "cause") ? error.cause : undefined
  return Predicate.hasProperty(cause, "_tag") && Predicate.hasProperty(cause, "message")
    ? Option.some({ _tag: String(cause._tag), message: String(cause.message) })
    : Option.none()
}

/** `usage.total_tokens` of a chat completion's body, when it has one. */
const usageOf = (body: ArrayBuffer): number | undefined => {
  try {
    const parsed = JSON.parse(new TextDecoder().decode(body)) as {
      readonly usage?: { readonly total_tokens?: unknown }
    }
    const total = parsed.usage?.total_tokens
    return typeof total === "number" && Number.isSafeInteger(total) && total >= 0 ? total : undefined
  } catch {
    return undefined
  }
}

/**
 * Failures after which the upstream cannot have counted the call: a 429 (OpenAI refused it), a
 * refusal by the bulkhead, a connection that never opened. Their reservation is released; any
 * other failure keeps its estimate, the safe side (the upstream may have run it).
 */
const neverCounted = (error: unknown): boolean =>
  error instanceof ProviderHttpClient.UpstreamRateLimited ||
  Predicate.isTagged(error, "BulkheadFull") ||
  Predicate.isTagged(error, "PermitWaitTimeout") ||
  (HttpClientError.isHttpClientError(error) && error._tag === "RequestError" && error.reason === "Transport")

/**
 * The `HttpClient` the OpenAI client is given: each request a provider call whose permit holds
 * until the body is read; the response handed on is that body, already in memory. The OpenAI
 * client sends absolute URLs (`HttpClient.make` parses them first); the provider's client appends
 * a path to its origin, so only the path goes on, and another origin is refused.
 *
 * Around the call, the limiter's reservation: the estimate (`estimateOf` the request: one request,
 * its prompt's tokens plus `max_tokens`) is reserved on both dimensions before it is sent, and
 * `usage.total_tokens` settled as soon as the body is in, inside the permit. A 429 releases it,
 * pauses the limiter for the `retry-after` (every process, with the Redis store) and sends the
 * request again through a fresh reservation.
 */
export const throughProvider = (
  http: ProviderHttpClient.ProviderHttpClient,
  limiter: RateLimiter.RateLimiter,
  settings: Pick<Settings, "maxTokens" | "expectedCompletion">
): HttpClient.HttpClient =>
  HttpClient.make((request, url) => {
    if (url.origin !== http.origin) {
      return Effect.fail(
        new HttpClientError.RequestError({
          request,
          reason: "InvalidUrl",
          description: `provider "openai" reaches ${http.origin} only, not ${url.origin}`
        })
      )
    }
    const path = HttpClientRequest.setUrl(request, url.pathname)
    const send = (reservation: RateLimiter.Reservation) =>
      http.execute(path, (response) =>
        Effect.flatMap(response.arrayBuffer, (body) => {
          const tokens = usageOf(body)
          const settled = tokens === undefined
            ? Effect.void
            : reservation.settle({ tokens }).pipe(
              // the response is good whatever the store says: the estimate stays charged instead
              Effect.catchAll((error) =>
                Effect.logWarning(`limiter "openai": settle failed, the estimate stays: ${error.message}`)
              )
            )
          return Effect.as(
            settled,
            HttpClientResponse.fromWeb(
              request,
              new Response(body, { status: response.status, headers: new Headers({ ...response.headers }) })
            )
          )
        }))
    const attempt = Effect.acquireUseRelease(
      limiter.reserve({ cost: estimateOf(request, settings) }),
      send,
      (reservation, exit) =>
        Exit.isFailure(exit) && Option.exists(Cause.failureOption(exit.cause), neverCounted)
          ? Effect.ignoreLogged(reservation.release)
          : Effect.void
    )
    return attempt.pipe(
      Effect.tapError((error) =>
        error instanceof ProviderHttpClient.UpstreamRateLimited
          ? Effect.ignoreLogged(limiter.pauseFor(error.retryAfter))
          : Effect.void
      ),
      Effect.retry({ times: 2, while: (error) => error instanceof ProviderHttpClient.UpstreamRateLimited }),
      Effect.mapError(asHttpClientError(request))
    )
  })

/** Requests and tokens, each `margin` under the quota, in one limiter: a start is charged on both or neither. */
export const limiterOptions = (settings: Pick<Settings, "quotas" | "margin">): RateLimiter.Options => ({
  name: "openai",
  limits: [
    {
      dimension: "requests",
      ...clientLimit(settings.quotas.requests, settings.margin),
      window: settings.quotas.windowMillis
    },
    {
      dimension: "tokens",
      ...clientLimit(settings.quotas.tokens, settings.margin),
      window: settings.quotas.windowMillis
    }
  ],
  maxWait: "10 minutes"
})

export class OpenAiLimiter extends Context.Tag("@sluice/example-llm-batch/OpenAiLimiter")<
  OpenAiLimiter,
  RateLimiter.RateLimiter
>() {}

/**
 * The provider: a bulkhead, the attempt timeout, no limiter of its own (the reservation around the
 * call is the limiter) and no retries (the reservation's loop retries a 429, each attempt reserved).
 */
export const providerSettings = (settings: Settings) =>
  ProviderHttpClient.withUpstreamErrors({
    bulkhead: { permits: settings.permits, maxWait: "10 minutes" },
    attemptTimeout: "60 seconds"
  })

/** `OpenAiClient`, the provider it runs through and the limiter (for their figures), from the settings. */
export const layer = (settings: Settings) =>
  OpenAiClient.layer({ apiKey: settings.apiKey, apiUrl: settings.baseUrl }).pipe(
    Layer.provide(
      Layer.effect(
        HttpClient.HttpClient,
        Effect.map(
          Effect.all([OpenAiHttp, OpenAiLimiter]),
          ([http, limiter]) => throughProvider(http, limiter, settings)
        )
      )
    ),
    Layer.provideMerge(
      OpenAiHttp.layer(OpenAi, {
        baseUrl: new URL(settings.baseUrl).origin,
        userAgent: "sluice-llm-batch/0.1 (example)",
        preconnect: true
      })
    ),
    Layer.provideMerge(OpenAi.layer(providerSettings(settings))),
    Layer.provideMerge(RateLimiter.layer(OpenAiLimiter, limiterOptions(settings))),
    Layer.provide(HttpPool.layerWithHttpClient())
  )

export const defaultApiKey = Redacted.make("sk-stand-in")
