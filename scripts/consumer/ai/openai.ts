// @effect/ai-openai within requests and tokens per minute: OpenAiLanguageModel, whose client asks
// for an HttpClient, given the provider's (Middleware.layer) against a loopback stand-in. A sluice
// refusal behind the SDK's error is caught by its tag after the call.
import { OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
import { Llm } from "@sluice/http"
import { Provider } from "@sluice/provider"
import { Layer, Redacted } from "effect"
import { run } from "./scenario.js"

class OpenAi extends Provider.Tag("openai")<OpenAi>() {}

run({
  provider: OpenAi,
  profile: Llm.openAi(),
  // the estimate (the prompt plus 4,096) fits once; settled with 17 tokens, it leaves room for 9,900
  tokens: 10_000,
  languageModel: (url) =>
    OpenAiLanguageModel.layer({ model: "gpt-4o-mini" }).pipe(
      Layer.provide(OpenAiClient.layer({ apiKey: Redacted.make("sk-stand-in"), apiUrl: `${url}/v1` }))
    )
})
