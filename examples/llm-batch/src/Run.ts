/**
 * One batch: the stand-in started (unless a URL is given), the OpenAI client over the provider,
 * every prompt completed by a fixed pool of workers, each call's estimate and real usage recorded,
 * progress on stderr, and a summary for the report.
 */
import * as OpenAiClient from "@effect/ai-openai/OpenAiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { Middleware, ProviderHttpClient } from "@sluice/http"
import { Provider, type ProviderRecording } from "@sluice/provider"
import { RateLimiterStore } from "@sluice/rate-limiter"
import { RedisRateLimiterStore } from "@sluice/rate-limiter-redis"
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { Redis } from "ioredis"
import * as Lanes from "./Lanes.js"
import * as OpenAi from "./OpenAi.js"
import * as Prompts from "./Prompts.js"
import * as Child from "./stand-in/Child.js"
import type * as StandIn from "./stand-in/StandIn.js"
import * as Tokens from "./Tokens.js"

export interface Config {
  /** The endpoint up to `/v1`; absent: a stand-in is started, with `quotas` as its own. */
  readonly url: string | undefined
  readonly apiKey: Redacted.Redacted | undefined
  readonly model: string
  /** Whose API the calls speak: OpenAI's chat completions (default) or Anthropic's messages. */
  readonly api?: "openai" | "anthropic" | undefined
  readonly quotas: OpenAi.Quotas
  readonly margin: number
  readonly permits: number
  readonly maxTokens: number
  readonly expectedCompletion: number | undefined
  readonly input: string | undefined
  readonly samplePrompts: number
  readonly redis: string | undefined
  readonly seed: number
  readonly progress: boolean
  /** Chat calls sent beside the batch, one a second from the first second; 0: none. */
  readonly interactive?: number | undefined
  /** With `interactive`: the provider's bulkhead serves them in a lane of their own. Default `true`. */
  readonly lanes?: boolean | undefined
}

/** One call as the client saw it. */
export interface Call {
  readonly id: string
  /** When its response arrived, in milliseconds from the batch's start. */
  readonly at: number
  readonly estimate: number
  /** `usage.total_tokens`; absent for a failed call. */
  readonly actual: number | undefined
  /** The sluice refusal or HTTP error that failed it. */
  readonly error?: string | undefined
  /** A chat call beside the batch (`interactive`), or one of the batch. */
  readonly lane: "interactive" | "batch"
  /** From its submission to its answer. */
  readonly latencyMillis: number
}

export interface Summary {
  readonly config: Config
  readonly elapsedMillis: number
  readonly calls: ReadonlyArray<Call>
  /** 429s the client received (retries included). */
  readonly tooManyRequests: number
  readonly verdict: Provider.Verdict
  /** The provider's figures the verdict reads, for the report to read them on its own rates. */
  readonly phases: Pick<
    Provider.Stats,
    "attempts" | "upstreamErrors" | "storeErrors" | "permitWait" | "limiterWait" | "callTime"
  >
  /** The stand-in's own figures, when this run started it. */
  readonly server: StandIn.Stats | undefined
  /** Each bulkhead lane as the provider saw it, when the run had lanes. */
  readonly lanes: ReadonlyArray<Provider.LaneSummary> | undefined
  /** The provider's recording, for the HTML report (`--report`). */
  readonly recording?: ProviderRecording.Recording | undefined
}

/** The stand-in's answer times: 40 ms, plus 0.4 ms a completion token (about 50 to 150 ms a call). */
export const STAND_IN_LATENCY = { baseMillis: 40, perTokenMillis: 0.4 }
/** The shortest completion the stand-in writes; the longest is the request's `max_tokens`. */
export const STAND_IN_MIN_COMPLETION = 16

export const standInOptions = (config: Pick<Config, "quotas" | "seed">): StandIn.Options => ({
  windowMillis: config.quotas.windowMillis,
  requests: config.quotas.requests,
  tokens: config.quotas.tokens,
  minCompletion: STAND_IN_MIN_COMPLETION,
  latency: STAND_IN_LATENCY,
  seed: config.seed
})

/** 429s the client received from the provider `name`'s API, retries included. */
const tooManyRequests = (name: string) =>
  Metric.value(ProviderHttpClient.upstreamStatusTotal.pipe(Metric.tagged("name", name), Metric.tagged("status", "429")))

/** `--redis` names a Redis that does not answer: the quotas cannot be shared, and the run does not start. */
export class RedisUnreachable extends Data.TaggedError("RedisUnreachable")<{
  readonly url: string
  readonly reason: string
}> {
  override get message(): string {
    return `--redis ${this.url}: Redis does not answer (${this.reason}); every call would fail while the ` +
      "quotas cannot be shared: start it, or run without --redis"
  }
}

/** One connection and a PING, within 2 s: what the store needs to decide anything. */
const checkRedis = (url: string) =>
  Effect.acquireUseRelease(
    Effect.sync(() =>
      new Redis(url, {
        lazyConnect: true,
        connectTimeout: 2_000,
        commandTimeout: 2_000,
        maxRetriesPerRequest: 0,
        enableOfflineQueue: false,
        retryStrategy: () => null
      })
    ),
    (client) =>
      Effect.tryPromise({
        try: () => client.connect().then(() => client.ping()),
        catch: (cause) => new RedisUnreachable({ url, reason: cause instanceof Error ? cause.message : String(cause) })
      }),
    (client) => Effect.sync(() => client.disconnect())
  )

export const storeLayer = (redis: string | undefined) =>
  redis === undefined
    ? RateLimiterStore.layerMemory
    : RedisRateLimiterStore.layer({ url: redis, prefix: "sluice:llm-batch:" })

export const run = (config: Config, entry: Child.Entry) =>
  Effect.gen(function*() {
    const prompts = config.input === undefined
      ? Prompts.sample(config.samplePrompts, config.seed)
      : yield* Prompts.fromFile(config.input)
    if (config.redis !== undefined) yield* checkRedis(config.redis)
    const standIn = config.url === undefined ? yield* Child.start(entry, standInOptions(config)) : undefined
    const baseUrl = config.url ?? `${standIn?.url}/v1`
    const settings: OpenAi.Settings = {
      baseUrl,
      apiKey: config.apiKey ?? OpenAi.defaultApiKey,
      quotas: config.quotas,
      margin: config.margin,
      permits: config.permits,
      maxTokens: config.maxTokens,
      expectedCompletion: config.expectedCompletion,
      lanes: (config.interactive ?? 0) > 0 && config.lanes !== false
    }
    const store = storeLayer(config.redis)
    if (config.api === "anthropic") {
      const anthropic = Effect.gen(function*() {
        const http = yield* HttpClient.HttpClient
        const provider = yield* OpenAi.Anthropic
        const apiKey = Redacted.value(settings.apiKey)
        const complete: Complete = (prompt, maxTokens) =>
          http.execute(
            HttpClientRequest.post(`${baseUrl}/messages`).pipe(
              HttpClientRequest.setHeaders({ "x-api-key": apiKey, "anthropic-version": "2023-06-01" }),
              HttpClientRequest.bodyUnsafeJson({
                model: config.model,
                max_tokens: maxTokens,
                ...Arr.findFirst(prompt.messages, (m) => m.role === "system").pipe(
                  Option.match({ onNone: () => ({}), onSome: (m) => ({ system: m.content }) })
                ),
                messages: Arr.filterMap(
                  prompt.messages,
                  (m) => m.role === "system" ? Option.none() : Option.some({ role: m.role, content: m.content })
                )
              })
            )
          ).pipe(
            Effect.flatMap(HttpClientResponse.filterStatusOk),
            Effect.flatMap(HttpClientResponse.schemaBodyJson(AnthropicUsage)),
            Effect.map(({ usage }) => usage.input_tokens + usage.output_tokens)
          )
        return yield* batch(config, prompts, standIn, complete, provider)
      })
      return yield* anthropic.pipe(Effect.provide(OpenAi.anthropicLayer(settings).pipe(Layer.provide(store))))
    }
    const openAi = Effect.gen(function*() {
      const openai = yield* OpenAiClient.OpenAiClient
      const provider = yield* OpenAi.OpenAi
      const complete: Complete = (prompt, maxTokens) =>
        Effect.map(
          openai.client.createChatCompletion({
            model: config.model,
            messages: Arr.map(prompt.messages, (message) => ({ role: message.role, content: message.content })),
            max_tokens: maxTokens
          }),
          (completion) => completion.usage?.total_tokens
        )
      return yield* batch(config, prompts, standIn, complete, provider)
    })
    return yield* openAi.pipe(Effect.provide(OpenAi.layer(settings).pipe(Layer.provide(store))))
  }).pipe(Effect.scoped)

/** What Anthropic's answer says it used. */
const AnthropicUsage = Schema.Struct({
  usage: Schema.Struct({ input_tokens: Schema.Number, output_tokens: Schema.Number })
})

/** One completion through the API's client, within `maxTokens`: the tokens its answer reports. */
type Complete = (
  prompt: Prompts.Prompt,
  maxTokens: number
) => Effect.Effect<number | undefined, { readonly message: string }>

const batch = (
  config: Config,
  prompts: ReadonlyArray<Prompts.Prompt>,
  standIn: StandIn.StandIn | undefined,
  completion: Complete,
  provider: Provider.Provider
) =>
  Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    const before = (yield* tooManyRequests(provider.name)).count
    const calls: Array<Call> = []

    const complete = (prompt: Prompts.Prompt, lane: Call["lane"] = "batch") =>
      Effect.gen(function*() {
        const maxTokens = lane === "interactive" ? Lanes.CHAT_MAX_TOKENS : config.maxTokens
        const estimate = Tokens.estimate(prompt.messages, maxTokens, config.expectedCompletion)
        const submitted = yield* Clock.currentTimeMillis
        // every call the client makes inside waits in this lane of the provider's bulkhead
        const result = yield* Effect.either(completion(prompt, maxTokens).pipe(Provider.withLane(lane)))
        const now = yield* Clock.currentTimeMillis
        const at = now - startedAt
        const latencyMillis = now - submitted
        calls.push(
          result._tag === "Right"
            ? { id: prompt.id, at, estimate, actual: result.right, lane, latencyMillis }
            : {
              id: prompt.id,
              at,
              estimate,
              lane,
              latencyMillis,
              actual: undefined,
              error: Option.match(Middleware.refusalOf(result.left), {
                onNone: () => result.left.message,
                onSome: (refusal) => `${refusal._tag}: ${refusal.message}`
              })
            }
        )
      })

    const progress = Effect.suspend(() => {
      const done = calls.length
      const tokens = calls.reduce((sum, call) => sum + (call.actual ?? 0), 0)
      return Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Console.error(
          `[${((now - startedAt) / 1000).toFixed(1)} s] ${done}/${prompts.length} calls, ${
            tokens.toLocaleString("en-US")
          } tokens used`
        ))
    })
    if (config.progress) yield* Effect.forkScoped(Effect.repeat(progress, Schedule.spaced("2 seconds")))

    // Interrupted (Ctrl-C, SIGTERM): one line says what the batch did; the calls in flight are abandoned.
    const interrupted = Effect.suspend(() => {
      const failed = calls.filter((call) => call.actual === undefined).length
      const tokens = calls.reduce((sum, call) => sum + (call.actual ?? 0), 0)
      return Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Console.error(
          `interrupted after ${((now - startedAt) / 1000).toFixed(1)} s: ${calls.length} of ${prompts.length} calls ` +
            `done (${failed} failed), ${tokens.toLocaleString("en-US")} tokens used; the calls in flight were abandoned`
        ))
    })

    // chat calls beside the batch, one a second, each answered as it comes
    const interactive = config.interactive ?? 0
    const chat = Effect.forEach(
      Array.from({ length: interactive }, (_, n) => n),
      (n) => Effect.delay(complete(Lanes.chatPrompt(n), "interactive"), `${n + 1} seconds`),
      { concurrency: "unbounded", discard: true }
    )
    // a fixed pool of workers, as many as the bulkhead has permits: more would only queue in it;
    // beside chat calls, a queue in the bulkhead for them to pass (or, without lanes, to wait in)
    const workers = interactive > 0 ? config.permits * Lanes.BATCH_QUEUE_PER_PERMIT : config.permits
    const rows = Stream.fromIterable(prompts).pipe(
      Stream.mapEffect((prompt) => complete(prompt), { concurrency: workers, unordered: true }),
      Stream.runDrain
    )
    yield* Effect.all([rows, chat], { concurrency: "unbounded", discard: true }).pipe(
      Effect.onInterrupt(() => interrupted)
    )
    const elapsedMillis = (yield* Clock.currentTimeMillis) - startedAt
    const stats = yield* provider.stats
    const summary: Summary = {
      config,
      elapsedMillis,
      calls,
      tooManyRequests: (yield* tooManyRequests(provider.name)).count - before,
      verdict: stats.verdict,
      phases: stats,
      server: standIn === undefined ? undefined : yield* standIn.stats,
      lanes: stats.lanes,
      recording: yield* provider.recording
    }
    return summary
  }).pipe(Effect.scoped)
