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
import { HttpPool, ProviderHttpClient, RateLimitHeaders } from "@sluice/http"
import { Provider } from "@sluice/provider"
import * as Effect from "effect/Effect"
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
  const fallback = { requests: 1, tokens: settings.maxTokens }
  if (body._tag !== "Uint8Array") return fallback
  try {
    const chat = JSON.parse(new TextDecoder().decode(body.body)) as {
      readonly messages?: ReadonlyArray<Tokens.Message>
      readonly max_tokens?: number
    }
    return {
      requests: 1,
      tokens: Tokens.estimate(chat.messages ?? [], chat.max_tokens ?? settings.maxTokens, settings.expectedCompletion)
    }
  } catch {
    // not JSON: no prompt to count, so max_tokens alone (the OpenAI client always sends JSON)
    return fallback
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

/** `usage.total_tokens` of a chat completion's body (the text the call read), when it has one. */
export const usageOf = (response: ProviderHttpClient.UsageResponse): { readonly tokens: number } | undefined => {
  if (typeof response.body !== "string") return undefined
  try {
    const parsed = JSON.parse(response.body) as { readonly usage?: { readonly total_tokens?: unknown } }
    const total = parsed.usage?.total_tokens
    return typeof total === "number" && Number.isSafeInteger(total) && total >= 0 ? { tokens: total } : undefined
  } catch {
    return undefined
  }
}

/**
 * The `HttpClient` the OpenAI client is given: each request a provider call whose permit holds
 * until the body is read, the body handed on already in memory. The OpenAI client sends absolute
 * URLs (`HttpClient.make` parses them first); the provider's client appends a path to its origin,
 * so only the path goes on, and another origin is refused. The body is read as text: that is what
 * the provider's `usage` reads the actual tokens from, inside the permit.
 */
export const throughProvider = (http: ProviderHttpClient.ProviderHttpClient): HttpClient.HttpClient =>
  HttpClient.make((request, url) =>
    url.origin !== http.origin
      ? Effect.fail(
        new HttpClientError.RequestError({
          request,
          reason: "InvalidUrl",
          description: `provider "openai" reaches ${http.origin} only, not ${url.origin}`
        })
      )
      : http.text(
        HttpClientRequest.setUrl(request, url.pathname),
        // a 429 means OpenAI did not run the request: sending it again is safe
        { idempotent: true }
      ).pipe(
        Effect.map((body) =>
          HttpClientResponse.fromWeb(
            request,
            new Response(body, { status: 200, headers: { "content-type": "application/json" } })
          )
        ),
        Effect.mapError(asHttpClientError(request))
      )
  )

const isRetryable = (error: unknown): boolean => error instanceof ProviderHttpClient.UpstreamRateLimited

/**
 * Requests and tokens, each `margin` under the quota, in the provider's one limiter: a start is
 * charged on both or neither.
 */
export const limiterSettings = (settings: Pick<Settings, "quotas" | "margin">) => ({
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
  ] as const,
  maxWait: "10 minutes" as const
})

/**
 * The provider: bulkhead → the limiter (requests and tokens) → attempt timeout → the call. A 429
 * pauses the limiter for the `retry-after` (every process, with the Redis store) and is retried,
 * each attempt through its own reservation.
 */
export const providerSettings = (settings: Settings) =>
  ProviderHttpClient.withUpstreamErrors({
    bulkhead: { permits: settings.permits, maxWait: "10 minutes" },
    rateLimiter: limiterSettings(settings),
    attemptTimeout: "60 seconds",
    retry: { maxAttempts: 3, isRetryable }
  })

/** `OpenAiClient`, and the provider it runs through (for its figures), from the settings. */
export const layer = (settings: Settings) =>
  OpenAiClient.layer({ apiKey: settings.apiKey, apiUrl: settings.baseUrl }).pipe(
    Layer.provide(Layer.effect(HttpClient.HttpClient, Effect.map(OpenAiHttp, throughProvider))),
    Layer.provideMerge(
      OpenAiHttp.layer(OpenAi, {
        baseUrl: new URL(settings.baseUrl).origin,
        userAgent: "sluice-llm-batch/0.1 (example)",
        preconnect: true,
        // each attempt reserves the estimate and settles the usage the body reports, inside the permit
        estimate: (request) => estimateOf(request, settings),
        usage: usageOf,
        // OpenAI's x-ratelimit-* headers tighten the limiter when the server knows better
        rateLimitHeaders: RateLimitHeaders.openai
      })
    ),
    Layer.provideMerge(OpenAi.layer(providerSettings(settings))),
    Layer.provide(HttpPool.layerWithHttpClient())
  )

export const defaultApiKey = Redacted.make("sk-stand-in")
