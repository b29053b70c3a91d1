// @effect/ai-anthropic within requests and tokens per minute: AnthropicLanguageModel through the
// provider's HttpClient (Middleware.layer) against a loopback stand-in; a sluice refusal behind
// the SDK's error is caught by its tag after the call.
import { AnthropicClient, AnthropicLanguageModel } from "@effect/ai-anthropic"
import { Llm } from "@sluice/http"
import { Provider } from "@sluice/provider"
import { Layer, Redacted } from "effect"
import { run } from "./scenario.js"

class Anthropic extends Provider.Tag("anthropic")<Anthropic>() {}

run({
  provider: Anthropic,
  profile: Llm.anthropic(),
  // whatever max_tokens the SDK sent is reserved; settled with 17 tokens, it leaves room for 39,900
  tokens: 40_000,
  languageModel: (url) =>
    AnthropicLanguageModel.layer({ model: "claude-sonnet-4-5" }).pipe(
      Layer.provide(AnthropicClient.layer({ apiKey: Redacted.make("sk-ant-stand-in"), apiUrl: url }))
    )
})
