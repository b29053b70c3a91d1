// @effect/ai-openai within requests and tokens per minute: OpenAiLanguageModel, whose client asks
// for an HttpClient, given the provider's (Middleware.layer) against a loopback stand-in. A sluice
// refusal behind the SDK's error is caught by its tag after the call.
import { LanguageModel } from "@effect/ai"
import { OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
import { HttpPool, Llm, Middleware } from "@sluice/http"
import { Provider } from "@sluice/provider"
import { RateLimiterStore } from "@sluice/rate-limiter"
import { Effect, Exit, Layer, Redacted } from "effect"
import { check, main, standIn } from "./standIn.js"

class OpenAi extends Provider.Tag("openai")<OpenAi>() {}

const program = Effect.gen(function*() {
  const server = yield* standIn
  const Live = OpenAiLanguageModel.layer({ model: "gpt-4o-mini" }).pipe(
    Layer.provide(OpenAiClient.layer({ apiKey: Redacted.make("sk-stand-in"), apiUrl: `${server.url}/v1` })),
    Layer.provide(Middleware.layer(OpenAi, { baseUrl: server.url, idempotent: true, ...Llm.openAi() })),
    Layer.provideMerge(OpenAi.layer({
      bulkhead: { permits: 2 },
      rateLimiter: {
        limits: [
          { dimension: "requests", limit: 1, window: "1 minute" },
          { dimension: "tokens", limit: 10_000, window: "1 minute", burst: 10_000 }
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
    // the estimate (the prompt plus 4,096) was settled with the 17 tokens the answer reported
    const provider = yield* OpenAi
    const limiter = provider.rateLimiter
    if (limiter === undefined) return yield* Effect.fail(new Error("consumer: the provider has no limiter"))
    const room = yield* Effect.exit(limiter.take({ cost: { tokens: 9_900 }, maxWait: 0 }))
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
