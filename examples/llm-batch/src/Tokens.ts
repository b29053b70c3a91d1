/**
 * What a chat completion will cost in tokens, before it is sent: its prompt counted with OpenAI's
 * own tokenizer (gpt-tokenizer, pure JS, the o200k encoding of gpt-4o-mini) plus the completion it
 * may produce. OpenAI counts `max_tokens` against the quota at admission, so the prompt plus
 * `max_tokens` never falls short; a smaller `expectedCompletion` (a learned typical length) reserves
 * less and can fall short, which the settle then charges.
 */
import { encodeChat } from "gpt-tokenizer/model/gpt-4o-mini"

export interface Message {
  readonly role: "system" | "user" | "assistant"
  readonly content: string
}

/** The prompt's tokens, as the chat format counts them (the role markers included). */
export const promptTokens = (messages: ReadonlyArray<Message>): number =>
  encodeChat(messages.map((message) => ({ role: message.role, content: message.content }))).length

/** The tokens a call is reserved at: its prompt, plus `expectedCompletion` (default: all of `maxTokens`). */
export const estimate = (
  messages: ReadonlyArray<Message>,
  maxTokens: number,
  expectedCompletion: number = maxTokens
): number => promptTokens(messages) + Math.min(maxTokens, expectedCompletion)
