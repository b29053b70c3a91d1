/**
 * The errors of the HTTP package, as values: the upstream's answers (`UpstreamRateLimited`,
 * `UpstreamStatus`), a body that could not be decoded (`DecodeError`), the body's bounds
 * (`BodyTooLarge`, `StreamIdleTimeout`) and a pool too small for its bulkheads (`PoolTooSmall`).
 * `ProviderHttpClient` and `HttpPool` re-export them; messages come from `@sluice/core`, so both
 * lines print the same sentences.
 *
 * @since 2.0.0
 */
export * as HttpError from "./HttpError.js"

/**
 * One connection pool for the process, sized from the bulkheads that use it.
 *
 * A connection pool limits connections per origin, and a pool smaller than the bulkheads in front
 * of it is an invisible second bound: callers hold a permit, then queue inside the HTTP client,
 * where no metric of theirs sees them. Each provider's HTTP client therefore *reserves* its
 * bulkhead's `maxPermits` on its origin when its layer is built; the pool for an origin is created
 * on first use with exactly the sum of the reservations, and a limit set by the user that is
 * smaller than that sum is refused when the layer is built, naming the origin and the numbers.
 *
 * @since 2.0.0
 */
export * as HttpPool from "./HttpPool.js"

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
export * as Llm from "./Llm.js"

/**
 * A provider as `HttpClient` middleware: every request an `HttpClient` sends becomes a call of the
 * provider (circuit breaker, then per attempt bulkhead → rate limiter with the request's estimate
 * → attempt budget → the request **and its whole body** → settle → release), retried with the 429
 * pause for every caller, within the provider's retry and total budgets. The result is an
 * `HttpClient`, so `HttpApiClient` (`effect/http-api`) and any code written against
 * `HttpClient.HttpClient` run through the provider unchanged.
 *
 * Status, headers and body reach the caller as the upstream sent them, error statuses included
 * (after the provider's last attempt). A request is either:
 *
 * - **buffered** (the default): its body is read inside the permit, bounded by `maxBodySize`
 *   (`BodyTooLarge` past it, the request aborted), and handed on from memory;
 * - **streamed**, when it asks for a stream (its `Accept` names `text/event-stream`, or its JSON
 *   body says `"stream": true`, as OpenAI's and Anthropic's do; `Options.streamed` decides
 *   otherwise): the response is handed on at its headers and its permit held until the body
 *   ends, fails, or its reader stops; `StreamIdleTimeout` after `streamIdleTimeout` without a
 *   chunk from the upstream, or without a read by the reader.
 *
 * @since 2.0.0
 */
export * as Middleware from "./Middleware.js"

/**
 * A provider's HTTP client as a service with typed methods: sugar over `Middleware`, whose calls
 * it makes (the same permit held to the body's last byte, the same 429 pause, bounds and metering).
 * What it adds: error statuses fail as `UpstreamRateLimited` / `UpstreamStatus` (their bodies
 * drained first) instead of being handed back, `json` decodes with a schema, per-request provider
 * options, and a service tag per provider.
 *
 * @since 2.0.0
 */
export * as ProviderHttpClient from "./ProviderHttpClient.js"

/**
 * Header profiles: the limits a server reports in its response headers, read as observations per
 * dimension (`{ dimension, limit?, remaining?, resetAfterMillis? }`), for a limiter to tighten on.
 *
 * | profile | headers | reset |
 * | --- | --- | --- |
 * | `openai` | `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` | Go durations: `1s`, `6m0s`, `20ms` |
 * | `anthropic` | `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}` | RFC 3339 instants |
 * | `ietf` | `RateLimit-Policy` (`q`) and `RateLimit` (`r`, `t`) structured fields, one dimension per policy name | seconds |
 * | `generic` | `X-RateLimit-Limit/Remaining/Reset`, the dimension `default` | seconds, or epoch seconds/milliseconds recognised by size |
 *
 * A reset that comes with nothing remaining (the one a limiter obeys: no start on that dimension
 * until it) is bounded, by one hour unless `withMaxReset` says otherwise (as `Retry-After` is by
 * five minutes): one beyond is read as the bound and reported as a `Problem` naming the header and
 * the value, so that `x-ratelimit-reset-tokens: 87600h` cannot hold a dimension for ten years
 * across the fleet (a server that still has nothing left then says so again). A reset with units
 * left is the server's figure, unchanged.
 *
 * Header names are matched in any case. An instant (Anthropic's reset, an epoch) becomes a duration
 * once, on the receiver's clock at receipt: from then on only the duration travels, so no other
 * process compares its clock with the server's. A value that cannot be read is never thrown: it is
 * left out and returned as a `Problem` naming the header and the value, for the caller to log.
 *
 * @since 2.0.0
 */
export * as RateLimitHeaders from "./RateLimitHeaders.js"
