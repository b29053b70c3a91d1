// What both AI SDK apps check: a language model whose client asks for an HttpClient, given the
// provider's (Middleware.layer) against the loopback stand-in, within 1 request and `tokens` per minute.
import { LanguageModel } from "@effect/ai"
import type { HttpClient } from "@effect/platform"
import { HttpPool, type Llm, Middleware } from "@sluice/http"
import type { Provider } from "@sluice/provider"
import { RateLimiterStore } from "@sluice/rate-limiter"
import { Effect, Exit, Layer } from "effect"
import { check, main, standIn } from "./standIn.js"

export interface Sdk<P, E> {
  readonly provider: Provider.TagClass<P, string>
  readonly profile: Llm.Profile
  /** The tokens per minute (the burst too): room for one call's estimate, not for two. */
  readonly tokens: number
  readonly languageModel: (url: string) => Layer.Layer<LanguageModel.LanguageModel, E, HttpClient.HttpClient>
}

/**
 * Runs the app: the first call is answered and its estimate settled with the 17 tokens the answer
 * reported; the second is refused by the limiter and caught by its tag after the SDK's call.
 */
export const run = <P, E>(sdk: Sdk<P, E>): void =>
  main(
    Effect.gen(function*() {
      const server = yield* standIn
      const Live = sdk.languageModel(server.url).pipe(
        Layer.provide(Middleware.layer(sdk.provider, { baseUrl: server.url, idempotent: true, ...sdk.profile })),
        Layer.provideMerge(sdk.provider.layer({
          bulkhead: { permits: 2 },
          rateLimiter: {
            limits: [
              { dimension: "requests", limit: 1, window: "1 minute" },
              { dimension: "tokens", limit: sdk.tokens, window: "1 minute", burst: sdk.tokens }
            ],
            maxWait: 0
          }
        })),
        Layer.provide(HttpPool.layer()),
        Layer.provide(RateLimiterStore.layerMemory)
      )
      yield* Effect.gen(function*() {
        const first = yield* LanguageModel.generateText({ prompt: "Say hello" })
        yield* check(first.text === "Hello from the stand-in", `the answer came through: ${first.text}`)
        const provider = yield* sdk.provider
        const limiter = provider.rateLimiter
        if (limiter === undefined) return yield* Effect.fail(new Error("consumer: the provider has no limiter"))
        const room = yield* Effect.exit(limiter.take({ cost: { tokens: sdk.tokens - 100 }, maxWait: 0 }))
        yield* check(Exit.isSuccess(room), "the usage the answer reported was settled")
        const second = yield* LanguageModel.generateText({ prompt: "Again" }).pipe(
          Effect.as("answered"),
          Middleware.liftRefusals,
          Effect.catchTag("RateLimitExceeded", (refusal) => Effect.succeed(`refused: ${refusal._tag}`))
        )
        yield* check(second === "refused: RateLimitExceeded", `the second call was refused by tag: ${second}`)
        yield* check(server.requests() === 1, `the stand-in served ${server.requests()} request (1 expected)`)
      }).pipe(Effect.provide(Live))
    }).pipe(Effect.scoped)
  )
