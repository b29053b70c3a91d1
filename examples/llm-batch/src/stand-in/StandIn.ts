/**
 * A stand-in for OpenAI's `POST /v1/chat/completions` (and Anthropic's `POST /v1/messages`, from the
 * same quotas, with Anthropic's bodies and `anthropic-ratelimit-*` headers) on a loopback port, enforcing requests and
 * tokens per window as the real service does: on what a call actually uses (its prompt, counted with
 * the same tokenizer as OpenAI, plus a completion of random length up to `max_tokens`, drawn when the
 * request arrives — the client learns it only from `usage`). Each dimension is a `Quota` (at most
 * `limit + burst` in any window); past either it answers 429 with `retry-after` and OpenAI's error
 * body. Every response carries OpenAI's `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`
 * headers, resets written as OpenAI writes them (`6m0s`, `1s`, `20ms`).
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Http from "node:http"
import * as Random from "../Random.js"
import * as Tokens from "../Tokens.js"
import * as Quota from "./Quota.js"

export const PATH = "/v1/chat/completions"
/** Anthropic's messages, served beside OpenAI's chat completions from the same quotas. */
export const ANTHROPIC_PATH = "/v1/messages"

/** Plain data (milliseconds, numbers): a child process takes these options over IPC. */
export interface Options {
  /** 0 or absent: a free port. */
  readonly port?: number | undefined
  /** The window both quotas count over (a minute at OpenAI; scaled down for a demo). */
  readonly windowMillis: number
  readonly requests: { readonly limit: number; readonly burst: number }
  readonly tokens: { readonly limit: number; readonly burst: number }
  /** The shortest completion, in tokens; the longest is the request's `max_tokens`. */
  readonly minCompletion: number
  /** Time to answer: `baseMillis` plus `perTokenMillis` for each completion token. */
  readonly latency: { readonly baseMillis: number; readonly perTokenMillis: number }
  readonly seed: number
}

export interface DimensionStats {
  readonly limit: number
  readonly burst: number
  /** The most one window (ending at any arrival) held of what was accepted. */
  readonly busiest: number
  /** What was accepted in each window, fixed windows from the first arrival. */
  readonly perWindow: ReadonlyArray<number>
  /** 429s for this dimension. */
  readonly rateLimited: number
}

export interface Stats {
  readonly windowMillis: number
  readonly received: number
  readonly answered: number
  readonly rateLimited: number
  readonly requests: DimensionStats
  readonly tokens: DimensionStats
}

export interface StandIn {
  readonly url: string
  readonly port: number
  readonly pid?: number | undefined
  readonly stats: Effect.Effect<Stats>
}

export class ListenFailed extends Data.TaggedError("ListenFailed")<{ readonly port: number; readonly reason: string }> {
  override get message(): string {
    return `the OpenAI stand-in could not listen on 127.0.0.1:${this.port}: ${this.reason}`
  }
}

const ChatRequest = Schema.Struct({
  model: Schema.String,
  messages: Schema.Array(
    Schema.Struct({ role: Schema.Literal("system", "user", "assistant"), content: Schema.String })
  ),
  max_tokens: Schema.optional(Schema.Int),
  max_completion_tokens: Schema.optional(Schema.Int)
})

const MessagesRequest = Schema.Struct({
  model: Schema.String,
  max_tokens: Schema.Int,
  system: Schema.optional(Schema.String),
  messages: Schema.Array(Schema.Struct({ role: Schema.Literal("user", "assistant"), content: Schema.String }))
})

/** What both APIs ask for, once read: the model, the prompt and the longest completion. */
interface Asked {
  readonly api: "openai" | "anthropic"
  readonly model: string
  readonly messages: ReadonlyArray<Tokens.Message>
  readonly maxTokens: number
}

/** Without `max_tokens`, OpenAI lets a completion run to the context's end; this stand-in stops at 4,096. */
const DEFAULT_MAX_TOKENS = 4_096

const WORDS = ["the", "limit", "token", "window", "quota", "reserve", "settle", "request", "usage", "debt"]

const errorBody = (message: string, type: string, code: string | null) => ({
  error: { message, type, param: null, code }
})

const anthropicError = (message: string, type: string) => ({ type: "error", error: { type, message } })

export const make = (options: Options) =>
  Effect.gen(function*() {
    const server = yield* NodeHttpServer.make(() => Http.createServer(), {
      port: options.port ?? 0,
      host: "127.0.0.1"
    }).pipe(
      Effect.mapError((error) =>
        new ListenFailed({
          port: options.port ?? 0,
          reason: error.cause instanceof Error ? error.cause.message : String(error.cause)
        })
      )
    )
    const port = server.address._tag === "TcpAddress" ? server.address.port : 0
    const requests = Quota.make({ ...options.requests, windowMillis: options.windowMillis })
    const tokens = Quota.make({ ...options.tokens, windowMillis: options.windowMillis })
    const random = Random.make(options.seed)
    const counts = { received: 0, answered: 0, requests: 0, tokens: 0 }

    /** OpenAI's headers: `remaining` is what the window allows now, never above the limit. */
    const rateHeaders = (now: number): Record<string, string> => {
      const header = (name: string, quota: Quota.Quota) => ({
        [`x-ratelimit-limit-${name}`]: String(quota.options.limit),
        [`x-ratelimit-remaining-${name}`]: String(
          Math.max(0, Math.min(quota.options.limit, quota.options.limit + quota.options.burst - quota.used(now)))
        ),
        [`x-ratelimit-reset-${name}`]: Quota.formatReset(quota.resetAfter(now))
      })
      return { ...header("requests", requests), ...header("tokens", tokens) }
    }

    /** Anthropic's headers: resets as RFC 3339 instants. */
    const anthropicHeaders = (now: number): Record<string, string> => {
      const header = (name: string, quota: Quota.Quota) => ({
        [`anthropic-ratelimit-${name}-limit`]: String(quota.options.limit),
        [`anthropic-ratelimit-${name}-remaining`]: String(
          Math.max(0, Math.min(quota.options.limit, quota.options.limit + quota.options.burst - quota.used(now)))
        ),
        [`anthropic-ratelimit-${name}-reset`]: new Date(now + quota.resetAfter(now)).toISOString()
      })
      return { ...header("requests", requests), ...header("tokens", tokens) }
    }

    const handle = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const now = yield* Clock.currentTimeMillis
      counts.received++
      const path = new URL(request.url, "http://stand-in").pathname
      if (request.method !== "POST" || (path !== PATH && path !== ANTHROPIC_PATH)) {
        return HttpServerResponse.unsafeJson(
          errorBody(`no endpoint ${request.method} ${request.url}`, "invalid_request_error", null),
          { status: 404 }
        )
      }
      const body: Either.Either<Asked, { readonly message: string }> = path === PATH
        ? Either.map(yield* Effect.either(HttpServerRequest.schemaBodyJson(ChatRequest)), (chat) => ({
          api: "openai" as const,
          model: chat.model,
          messages: chat.messages,
          maxTokens: chat.max_tokens ?? chat.max_completion_tokens ?? DEFAULT_MAX_TOKENS
        }))
        : Either.map(yield* Effect.either(HttpServerRequest.schemaBodyJson(MessagesRequest)), (messages) => ({
          api: "anthropic" as const,
          model: messages.model,
          messages: messages.system === undefined
            ? messages.messages
            : [{ role: "system" as const, content: messages.system }, ...messages.messages],
          maxTokens: messages.max_tokens
        }))
      if (body._tag === "Left") {
        return HttpServerResponse.unsafeJson(
          errorBody(`invalid body: ${body.left.message}`, "invalid_request_error", null),
          { status: 400 }
        )
      }
      const chat = body.right
      const anthropic = chat.api === "anthropic"
      const maxTokens = chat.maxTokens
      const promptTokens = Tokens.promptTokens(chat.messages)
      const completionTokens = Random.between(random, Math.min(options.minCompletion, maxTokens), maxTokens)
      const total = promptTokens + completionTokens
      const waits = { requests: requests.waitFor(now, 1), tokens: tokens.waitFor(now, total) }
      const binding = waits.tokens > waits.requests ? "tokens" : "requests"
      const wait = Math.max(waits.requests, waits.tokens)
      if (wait > 0) {
        counts[binding]++
        const quota = binding === "tokens" ? tokens : requests
        const message =
          `Rate limit reached for ${chat.model} on ${binding} per ${
            options.windowMillis / 1000
          }s: Limit ${quota.options.limit}, ` +
          `Used ${quota.used(now)}, Requested ${binding === "tokens" ? total : 1}. Please try again in ${
            Quota.formatReset(wait)
          }.`
        return HttpServerResponse.unsafeJson(
          anthropic ? anthropicError(message, "rate_limit_error") : errorBody(message, binding, "rate_limit_exceeded"),
          {
            status: 429,
            headers: {
              ...(anthropic ? anthropicHeaders(now) : rateHeaders(now)),
              "retry-after": String(Math.ceil(wait / 1000))
            }
          }
        )
      }
      requests.add(now, 1)
      tokens.add(now, total)
      const headers = anthropic ? anthropicHeaders(now) : rateHeaders(now)
      yield* Effect.sleep(
        Duration.millis(options.latency.baseMillis + options.latency.perTokenMillis * completionTokens)
      )
      counts.answered++
      const text = Array.from({ length: completionTokens }, (_, i) => WORDS[i % WORDS.length]).join(" ")
      if (anthropic) {
        return HttpServerResponse.unsafeJson({
          id: `msg_${counts.received}`,
          type: "message",
          role: "assistant",
          model: chat.model,
          content: [{ type: "text", text }],
          stop_reason: completionTokens === maxTokens ? "max_tokens" : "end_turn",
          stop_sequence: null,
          usage: { input_tokens: promptTokens, output_tokens: completionTokens }
        }, { headers })
      }
      return HttpServerResponse.unsafeJson({
        id: `chatcmpl-${counts.received}`,
        object: "chat.completion",
        created: Math.floor(now / 1000),
        model: chat.model,
        choices: [{
          index: 0,
          message: { role: "assistant", content: text, refusal: null },
          logprobs: null,
          finish_reason: completionTokens === maxTokens ? "length" : "stop"
        }],
        usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: total }
      }, { headers })
    })

    yield* server.serve(handle)
    const dimension = (quota: Quota.Quota, rateLimited: number): DimensionStats => ({
      limit: quota.options.limit,
      burst: quota.options.burst,
      busiest: quota.busiest(),
      perWindow: quota.perWindow(),
      rateLimited
    })
    const self: StandIn = {
      url: `http://127.0.0.1:${port}`,
      port,
      stats: Effect.sync(() => ({
        windowMillis: options.windowMillis,
        received: counts.received,
        answered: counts.answered,
        rateLimited: counts.requests + counts.tokens,
        requests: dimension(requests, counts.requests),
        tokens: dimension(tokens, counts.tokens)
      }))
    }
    return self
  })
