import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as Api from "../Llm.js"
import type * as ProviderHttpClient from "../ProviderHttpClient.js"
import * as RateLimitHeaders from "../RateLimitHeaders.js"

/** @internal */
export const countTokens = (text: string): number => Math.ceil(text.length / 4)

const utf8 = new TextDecoder()

type Json = Readonly<Record<string, unknown>>

const isRecord = (u: unknown): u is Json =>
  typeof u === "object" && u !== null && !Array.isArray(u) && !ArrayBuffer.isView(u)

/** The request's JSON body, when it has one. */
const bodyOf = (request: HttpClientRequest.HttpClientRequest): Json | undefined => {
  const body = request.body
  if (body._tag !== "Uint8Array") return undefined
  try {
    const parsed: unknown = JSON.parse(utf8.decode(body.body))
    return isRecord(parsed) ? parsed : undefined
  } catch {
    return undefined
  }
}

/** Every text under `value`: strings, and the strings of arrays and objects, recursively. */
const texts = (value: unknown, out: Array<string>): Array<string> => {
  if (typeof value === "string") out.push(value)
  else if (Array.isArray(value)) { for (const item of value) texts(item, out) }
  else if (isRecord(value)) { for (const item of Object.values(value)) texts(item, out) }
  return out
}

/** The first of `keys` that holds a non-negative integer. */
const integerAt = (body: Json, keys: ReadonlyArray<string>): number | undefined => {
  for (const key of keys) {
    const value = body[key]
    if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return value
  }
  return undefined
}

const makeEstimate = (
  promptKeys: ReadonlyArray<string>,
  maxKeys: ReadonlyArray<string>,
  options: Api.ProfileOptions | undefined
) => {
  const count = options?.countTokens ?? countTokens
  const fallbackMax = options?.defaultMaxOutputTokens ?? 4_096
  return (request: HttpClientRequest.HttpClientRequest): { readonly requests: number; readonly tokens: number } => {
    const body = bodyOf(request)
    if (body === undefined) return { requests: 1, tokens: fallbackMax }
    let prompt = 0
    for (const key of promptKeys) {
      for (const text of texts(body[key], [])) prompt += count(text)
    }
    return { requests: 1, tokens: prompt + (integerAt(body, maxKeys) ?? fallbackMax) }
  }
}

/** The body as JSON when it is JSON, else the server-sent events' data, parsed, in order. */
const readBody = (body: unknown): { readonly json: unknown } | { readonly events: ReadonlyArray<unknown> } => {
  if (isRecord(body)) return { json: body }
  const text = typeof body === "string" ? body : ArrayBuffer.isView(body) ? utf8.decode(body as Uint8Array) : undefined
  if (text === undefined) return { events: [] }
  try {
    return { json: JSON.parse(text) }
  } catch {
    const events: Array<unknown> = []
    for (const line of text.split("\n")) {
      if (!line.startsWith("data:")) continue
      try {
        events.push(JSON.parse(line.slice(5)))
      } catch {
        // [DONE], or an event cut at the start of what was kept
      }
    }
    return { events }
  }
}

const sum = (usage: Json, keys: ReadonlyArray<string>): number | undefined => {
  let total = 0
  let found = false
  for (const key of keys) {
    const value = usage[key]
    if (typeof value === "number") {
      total += value
      found = true
    }
  }
  return found ? total : undefined
}

/** OpenAI: `usage` of a chat completion or a response, or of a stream's last event that has one. */
const openAiTokens = (value: unknown): number | undefined => {
  if (!isRecord(value)) return undefined
  const usage = isRecord(value.usage) ? value.usage : isRecord(value.response) ? value.response.usage : undefined
  if (!isRecord(usage)) return undefined
  return typeof usage.total_tokens === "number"
    ? usage.total_tokens
    : sum(usage, ["prompt_tokens", "completion_tokens", "input_tokens", "output_tokens"])
}

const openAiUsage = (response: ProviderHttpClient.UsageResponse): { readonly tokens: number } | undefined => {
  const read = readBody(response.body)
  if ("json" in read) {
    const tokens = openAiTokens(read.json)
    return tokens === undefined ? undefined : { tokens }
  }
  for (let i = read.events.length - 1; i >= 0; i--) {
    const tokens = openAiTokens(read.events[i])
    if (tokens !== undefined) return { tokens }
  }
  return undefined
}

/** What Anthropic counts against its input quota, and the output. */
const anthropicInput = ["input_tokens", "cache_creation_input_tokens"] as const

const anthropicUsage = (response: ProviderHttpClient.UsageResponse): { readonly tokens: number } | undefined => {
  const read = readBody(response.body)
  if ("json" in read) {
    const usage = isRecord(read.json) ? read.json.usage : undefined
    if (!isRecord(usage)) return undefined
    const tokens = sum(usage, [...anthropicInput, "output_tokens"])
    return tokens === undefined ? undefined : { tokens }
  }
  // message_start carries the input and the first output count; each message_delta the output so far
  let input: number | undefined
  let output: number | undefined
  for (const event of read.events) {
    if (!isRecord(event)) continue
    const usage = event.type === "message_start" && isRecord(event.message) ? event.message.usage : event.usage
    if (!isRecord(usage)) continue
    input = sum(usage, anthropicInput) ?? input
    output = typeof usage.output_tokens === "number" ? usage.output_tokens : output
  }
  return input === undefined && output === undefined ? undefined : { tokens: (input ?? 0) + (output ?? 0) }
}

/** @internal */
export const openAi = (options?: Api.ProfileOptions | undefined): Api.Profile => ({
  estimate: makeEstimate(
    ["messages", "input", "instructions", "tools"],
    ["max_completion_tokens", "max_tokens", "max_output_tokens"],
    options
  ),
  usage: openAiUsage,
  rateLimitHeaders: RateLimitHeaders.openai
})

/** @internal */
export const anthropic = (options?: Api.ProfileOptions | undefined): Api.Profile => ({
  estimate: makeEstimate(["system", "messages", "tools"], ["max_tokens"], options),
  usage: anthropicUsage,
  rateLimitHeaders: RateLimitHeaders.anthropic
})
