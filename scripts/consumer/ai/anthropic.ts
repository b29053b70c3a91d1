// @effect/ai-anthropic within requests and tokens per minute: AnthropicLanguageModel through the
// provider's HttpClient (Middleware.layer) against a loopback stand-in; a sluice refusal behind
// the SDK's error is caught by its tag after the call.
import { LanguageModel } from "@effect/ai"
import { AnthropicClient, AnthropicLanguageModel } from "@effect/ai-anthropic"
import { HttpPool, Llm, Middleware } from "@sluice/http"
import { Provider } from "@sluice/provider"
import { RateLimiterStore } from "@sluice/rate-limiter"
import { Effect, Exit, Layer, Redacted } from "effect"
import { check, main, standIn } from "./standIn.js"

class Anthropic extends Provider.Tag("anthropic")<Anthropic>() {}

const program = Effect.gen(function*() {
  const server = yield* standIn
  const Live = AnthropicLanguageModel.layer({ model: "claude-sonnet-4-5" }).pipe(
    Layer.provide(AnthropicClient.layer({ apiKey: Redacted.make("sk-ant-stand-in"), apiUrl: server.url })),
    Layer.provide(Middleware.layer(Anthropic, { baseUrl: server.url, idempotent: true, ...Llm.anthropic() })),
    Layer.provideMerge(Anthropic.layer({
      bulkhead: { permits: 2 },
      rateLimiter: {
        limits: [
          { dimension: "requests", limit: 1, window: "1 minute" },
          { dimension: "tokens", limit: 40_000, window: "1 minute", burst: 40_000 }
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
    // whatever max_tokens the SDK sent was reserved, then settled with the 17 tokens reported
    const provider = yield* Anthropic
    const limiter = provider.rateLimiter
    if (limiter === undefined) return yield* Effect.fail(new Error("consumer: the provider has no limiter"))
    const room = yield* Effect.exit(limiter.take({ cost: { tokens: 39_900 }, maxWait: 0 }))
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

main(program)
