/**
 * The batch: prompts from a JSONL file (`{"id": "p1", "prompt": "...", "system": "..."}` per line,
 * `system` optional) or a built-in sample of seeded prompts of varied length, so that token costs
 * differ from call to call as they do in a real batch.
 */
import type * as Arr from "effect/Array"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Fs from "node:fs"
import * as Random from "./Random.js"
import type * as Tokens from "./Tokens.js"

export interface Prompt {
  readonly id: string
  readonly messages: Arr.NonEmptyReadonlyArray<Tokens.Message>
}

export class InputError extends Data.TaggedError("InputError")<{ readonly file: string; readonly reason: string }> {
  override get message(): string {
    return `${this.file}: ${this.reason}`
  }
}

const Line = Schema.parseJson(Schema.Struct({
  id: Schema.String,
  prompt: Schema.String,
  system: Schema.optional(Schema.String)
}))
const decodeLine = Schema.decodeUnknownEither(Line)

/** Every prompt of a JSONL (UTF-8) file; a malformed line fails the whole read with its line number. */
export const fromFile = (file: string): Effect.Effect<ReadonlyArray<Prompt>, InputError> =>
  Effect.gen(function*() {
    const bytes = yield* Effect.try({
      try: () => Fs.readFileSync(file),
      catch: (cause) => new InputError({ file, reason: cause instanceof Error ? cause.message : String(cause) })
    })
    // each line decoded on its own, strictly: a file that is not UTF-8 (Latin-1, say) is refused
    // naming the line, not read as replacement characters
    const decoder = new TextDecoder("utf-8", { fatal: true })
    const prompts: Array<Prompt> = []
    let start = 0
    for (let index = 0; start <= bytes.length; index++) {
      const end = bytes.indexOf(0x0a, start)
      const raw = bytes.subarray(start, end < 0 ? bytes.length : end)
      start = end < 0 ? bytes.length + 1 : end + 1
      let line: string
      try {
        line = decoder.decode(raw)
      } catch {
        return yield* new InputError({
          file,
          reason: `line ${
            index + 1
          } is not valid UTF-8 (a Latin-1 file? convert it first, e.g. iconv -f latin1 -t utf-8)`
        })
      }
      if (line.trim() === "") continue
      const decoded = decodeLine(line)
      if (decoded._tag === "Left") {
        return yield* new InputError({
          file,
          reason: `line ${index + 1}: expected {"id", "prompt", "system"?}: ${decoded.left.message}`
        })
      }
      const { id, prompt, system } = decoded.right
      prompts.push({
        id,
        messages: system === undefined
          ? [{ role: "user", content: prompt }]
          : [{ role: "system", content: system }, { role: "user", content: prompt }]
      })
    }
    if (prompts.length === 0) return yield* new InputError({ file, reason: "no prompts" })
    return prompts
  })

const TASKS = [
  "Summarise the following notes in two sentences",
  "List three risks in the following plan",
  "Translate the following into plain English",
  "Suggest a title for the following text",
  "Answer the question at the end of the following text"
]
const SENTENCES = [
  "The batch runs overnight against a provider that limits requests and tokens per minute.",
  "Each call's cost is known only when the response arrives, in its usage field.",
  "A reservation is made from the prompt's tokens and the largest completion allowed.",
  "When the call returns, the real usage replaces the estimate on every dimension.",
  "Calls that used more than reserved move the schedule forward for those that follow.",
  "Calls that used less give the unused part back when that cannot overrun a window.",
  "Two workers share the quota through one store, so together they stay inside it.",
  "The report names the dimension that bound the run and the share of it achieved."
]

/** `count` prompts, seeded: each a task and 1 to 16 sentences of context (about 30 to 330 prompt tokens). */
export const sample = (count: number, seed: number): ReadonlyArray<Prompt> => {
  const random = Random.make(seed)
  return Array.from({ length: count }, (_, i) => {
    const sentences = Array.from(
      { length: Random.between(random, 1, 16) },
      () => SENTENCES[Random.between(random, 0, SENTENCES.length - 1)]
    )
    const task = TASKS[Random.between(random, 0, TASKS.length - 1)]
    return {
      id: `p${String(i + 1).padStart(4, "0")}`,
      messages: [
        { role: "system", content: "You are a concise assistant." },
        { role: "user", content: `${task}:\n\n${sentences.join(" ")}\n\nWhat matters most here?` }
      ]
    }
  })
}
