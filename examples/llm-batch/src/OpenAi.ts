/**
 * The client: Effect's own `@effect/ai-openai` within a sluice provider. `OpenAiClient` asks for an
 * `HttpClient`; `Middleware.layer` gives it one whose every request is a call of the provider
 * (bulkhead → rate limiter → attempt timeout → the call, its body read inside the permit), with the
 * status, headers and body OpenAI sent, so the OpenAI client's typed API and sluice's bounds
 * compose without either knowing the other.
 */
import * as OpenAiClient from "@effect/ai-openai/OpenAiClient"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { HttpPool, Llm, Middleware, ProviderHttpClient } from "@sluice/http"
import { Provider } from "@sluice/provider"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Lanes from "./Lanes.js"
import * as Tokens from "./Tokens.js"

export class OpenAi extends Provider.Tag("openai")<OpenAi>() {}
export class Anthropic extends Provider.Tag("anthropic")<Anthropic>() {}

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
  /** The bulkhead's lanes: interactive before batch (`Lanes.lanes`). Default: one queue. */
  readonly lanes?: boolean | undefined
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
      readonly system?: string
      readonly max_tokens?: number
    }
    // Anthropic's system prompt travels beside the messages; OpenAI's is one of them
    const messages = chat.system === undefined
      ? chat.messages ?? []
      : [{ role: "system" as const, content: chat.system }, ...chat.messages ?? []]
    return {
      requests: 1,
      tokens: Tokens.estimate(messages, chat.max_tokens ?? settings.maxTokens, settings.expectedCompletion)
    }
  } catch {
    // not JSON: no prompt to count, so max_tokens alone (the OpenAI client always sends JSON)
    return fallback
  }
}

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
    bulkhead: {
      permits: settings.permits,
      maxWait: "10 minutes",
      ...(settings.lanes === true ? { lanes: Lanes.lanes } : {})
    },
    rateLimiter: limiterSettings(settings),
    attemptTimeout: "60 seconds",
    retry: { maxAttempts: 3, isRetryable },
    // for the run report (--report): quarter seconds show a 429's pause and the limiter's pace
    recording: { bucket: "250 millis" }
  })

/** The middleware's options for one API: the estimate counted with OpenAI's tokenizer, the API's profile. */
const middlewareOptions = (settings: Settings, profile: Llm.Profile): Middleware.Options => ({
  baseUrl: new URL(settings.baseUrl).origin,
  userAgent: "sluice-llm-batch/0.1 (example)",
  preconnect: true,
  // a 429 means the API did not run the request: sending it again is safe
  idempotent: true,
  // requests spaced by the limiter leave when it says, not after the work of the responses read in
  // the same turn of the event loop (see @sluice/http's README, "Where calls run")
  scheduler: "check-phase",
  // the API's usage and rate-limit headers
  ...profile,
  estimate: (request) => estimateOf(request, settings)
})

/** `OpenAiClient`, and the provider it runs through (for its figures), from the settings. */
export const layer = (settings: Settings) =>
  OpenAiClient.layer({ apiKey: settings.apiKey, apiUrl: settings.baseUrl }).pipe(
    Layer.provide(Middleware.layer(OpenAi, middlewareOptions(settings, Llm.openAi()))),
    Layer.provideMerge(OpenAi.layer(providerSettings(settings))),
    Layer.provide(HttpPool.layer())
  )

/**
 * Anthropic's messages through plain `HttpClient` code: the middleware's `HttpClient` service, and
 * the provider it runs through.
 */
export const anthropicLayer = (settings: Settings) =>
  Middleware.layer(Anthropic, middlewareOptions(settings, Llm.anthropic())).pipe(
    Layer.provideMerge(Anthropic.layer(providerSettings(settings))),
    Layer.provide(HttpPool.layer())
  )

export const defaultApiKey = Redacted.make("sk-stand-in")
