/**
 * LLM profiles: what a request to an LLM API costs before it is sent, what it cost once answered,
 * and the API's rate-limit headers, ready to spread into the options of `Middleware` or
 * `ProviderHttpClient` (`{ baseUrl, ...Llm.openAi() }`).
 *
 * | profile | requests | estimate | usage |
 * | --- | --- | --- | --- |
 * | `openAi` | `/chat/completions`, `/responses` | prompt (`messages`, `input`, `instructions`, `tools`) + `max_completion_tokens` / `max_tokens` / `max_output_tokens` | `usage.total_tokens`; a stream's last event with `usage` (`response.completed`; a chat stream with `stream_options.include_usage`) |
 * | `anthropic` | `/v1/messages` | prompt (`system`, `messages`, `tools`) + `max_tokens` | `input_tokens + cache_creation_input_tokens + output_tokens`; a stream's `message_start` and last `message_delta` |
 *
 * Both charge the limiter's dimensions `requests` (1) and `tokens`: give the provider's limiter
 * those two. The prompt's tokens are counted by `countTokens`, by default a quarter of its
 * characters, rounded up (OpenAI's rule of thumb for English; a tokenizer such as `gpt-tokenizer`
 * is exact for OpenAI's models); the texts counted are every string of the fields named, so
 * JSON keys of tools and images are not. A request that names no output limit reserves
 * `defaultMaxOutputTokens` (4,096). The estimate is settled with the usage the answer reports,
 * inside the permit: a generous estimate costs waiting, never quota.
 *
 * `usage` reads the body however it was read: parsed JSON, text or bytes, whole or a stream's
 * events. A response without usage (a chat stream without `include_usage`) is logged by the client,
 * and the estimate stands.
 *
 * @since 2.0.0
 */
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as internal from "./internal/llm.js"
import type * as ProviderHttpClient from "./ProviderHttpClient.js"
import type * as RateLimitHeaders from "./RateLimitHeaders.js"

/**
 * @since 2.0.0
 * @category models
 */
export interface ProfileOptions {
  /** The tokens of a text. Default: a quarter of its characters, rounded up. */
  readonly countTokens?: ((text: string) => number) | undefined
  /** What a request that names no output limit reserves for its answer. Default 4,096. */
  readonly defaultMaxOutputTokens?: number | undefined
}

/**
 * The options a profile sets.
 *
 * @since 2.0.0
 * @category models
 */
export interface Profile {
  readonly estimate: (request: HttpClientRequest.HttpClientRequest) => {
    readonly requests: number
    readonly tokens: number
  }
  readonly usage: (response: ProviderHttpClient.UsageResponse) => { readonly tokens: number } | undefined
  readonly rateLimitHeaders: RateLimitHeaders.Profile
}

/**
 * OpenAI: chat completions and the Responses API.
 *
 * @since 2.0.0
 * @category profiles
 */
export const openAi: (options?: ProfileOptions | undefined) => Profile = internal.openAi

/**
 * Anthropic: messages.
 *
 * @since 2.0.0
 * @category profiles
 */
export const anthropic: (options?: ProfileOptions | undefined) => Profile = internal.anthropic

/**
 * The default token counter: a quarter of the text's characters, rounded up.
 *
 * @since 2.0.0
 * @category utils
 */
export const countTokens: (text: string) => number = internal.countTokens
