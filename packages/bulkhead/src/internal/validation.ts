/**
 * A bulkhead's options, declared once as a schema: the constructor decodes them and
 * `Bulkhead.config` reads the same schema, so options and Config can never disagree. A bad value
 * is a defect whose message names the bulkhead, the option and the value as written.
 *
 * @internal
 */
import { OptionSchema } from "@sluice/options"
import * as Cause from "effect/Cause"
import * as Schema from "effect/Schema"

/** @internal */
export const illegal = (message: string): Cause.IllegalArgumentException => new Cause.IllegalArgumentException(message)

/** @internal */
export const show = OptionSchema.show

/**
 * Safe integers only: past 2^53 - 1 a count is no longer exact. The hot-path check of a call's `permits`,
 * whose bound (`maxPermits`) is the bulkhead's own.
 *
 * @internal
 */
export const isPositiveInteger = (n: unknown): n is number => typeof n === "number" && Number.isSafeInteger(n) && n >= 1

/** A budget for the wait: 0 is "never wait", infinity "no limit"; negative or NaN is a mistake. */
const MaxWait = OptionSchema.duration({ zero: true, infinite: true })

/**
 * The settings every bulkhead has, local or distributed (the Redis bulkhead extends them).
 *
 * @internal
 */
export const Limits = Schema.Struct({
  permits: OptionSchema.integer({ min: 1 }),
  maxPermits: Schema.optional(OptionSchema.integer({ min: 1 })),
  maxWaiting: Schema.optional(OptionSchema.integer({ min: 0, infinite: true })),
  maxWait: Schema.optional(MaxWait)
}).pipe(Schema.filter((settings) =>
  settings.maxPermits === undefined || settings.maxPermits >= settings.permits || {
    path: ["maxPermits"],
    message: `must be an integer ≥ permits (${settings.permits}), got ${settings.maxPermits}`
  }
))

/** @internal */
export const Settings = Schema.extend(
  Limits,
  Schema.Struct({ order: Schema.optional(OptionSchema.literal("fifo", "lifo")) })
)

/** Keys a bulkhead takes as given or checks on its own: the name, the lanes, the deprecated `cost`. */
const settingsGiven = ["name", "lanes", "cost"]

/** @internal */
export const decodeSettings = (name: string) =>
  OptionSchema.decodeSync(Settings, OptionSchema.owner("bulkhead", name), settingsGiven)

/** A call's keys checked on the hot path (`permits`, `cost`) or by its lane. */
const runGiven = ["permits", "cost", "lane"]

const RunOptions = Schema.Struct({
  maxWait: Schema.optional(MaxWait),
  workers: Schema.optional(OptionSchema.integer({ min: 1 })),
  buffer: Schema.optional(OptionSchema.integer({ min: 1 }))
})

/**
 * A call's own `maxWait` and the batch helpers' counts.
 *
 * @internal
 */
export const decodeRunOptions = (name: string) =>
  OptionSchema.decodeSync(RunOptions, OptionSchema.owner("bulkhead", name), runGiven)
