// A library built on @sluice/options: option schemas of its own, their decoder and their Config
// section, inferred rather than annotated.
import { OptionSchema } from "@sluice/options"
import { Config, Schema } from "effect"

export const Retry = Schema.Struct({
  attempts: OptionSchema.integer({ min: 1 }),
  backoff: Schema.optional(OptionSchema.duration({ zero: true, infinite: false })),
  jitter: Schema.optional(OptionSchema.literal("none", "full"))
})

export const decodeRetry = OptionSchema.decodeResult(Retry, OptionSchema.owner("retry", "library"))

export const retryConfig = Config.nested(OptionSchema.config(Retry, "a retry policy"), "RETRY")
