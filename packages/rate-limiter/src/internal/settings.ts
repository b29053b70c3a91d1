/**
 * A limiter's options, declared once as schemas on `@sluice/options`: `make` decodes them and
 * `RateLimiter.config` reads the same schema, so options and Config can never disagree. A bad
 * value is a defect whose message names the limiter, the option and the value as written.
 *
 * @internal
 */
import * as LimiterInput from "@sluice/core/LimiterInput"
import * as LimiterMessages from "@sluice/core/LimiterMessages"
import { OptionSchema } from "@sluice/options"
import type { NonEmptyReadonlyArray } from "effect/Array"
import * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type * as RateLimiter from "../RateLimiter.js"
import type * as RateLimiterStore from "../RateLimiterStore.js"

/** @internal */
export const show = OptionSchema.show

/** A wait budget: 0 is "never wait", infinity "no limit"; negative or NaN is a mistake. */
const MaxWait = OptionSchema.duration({ zero: true, infinite: true })
/** A pause (or a `resetAfter` heard from upstream): a pause for good would stop the limiter. */
const Pause = OptionSchema.duration({ zero: true, infinite: false })
const Count = OptionSchema.integer({ min: 1 })

const Limit = Schema.Struct({
  dimension: Schema.optional(OptionSchema.make(Schema.NonEmptyString, {
    rule: "a non-empty string",
    fromText: (text) => text
  })),
  limit: Count,
  window: OptionSchema.duration({ zero: false, infinite: false }),
  burst: Schema.optional(Count),
  algorithm: Schema.optional(OptionSchema.literal("gcra", "fixed-window", "sliding-window"))
})

const burstOnGcraOnly = <A extends Schema.Schema.Type<typeof Limit>>(limit: A) =>
  limit.burst === undefined || (limit.algorithm ?? "gcra") === "gcra" || {
    path: ["burst"],
    message: LimiterMessages.burstOnGcraOnly
  }

/** One limit with the default wait budget: what `config` reads. @internal */
export const Single = Schema.extend(
  Limit,
  Schema.Struct({ maxWait: Schema.optional(MaxWait), maxResetAfter: Schema.optional(Pause) })
).pipe(Schema.filter(burstOnGcraOnly))

const Multi = Schema.Struct({
  limits: Schema.Array(Limit.pipe(Schema.filter(burstOnGcraOnly))),
  maxWait: Schema.optional(MaxWait),
  maxResetAfter: Schema.optional(Pause)
})

/**
 * The longest reset an upstream's word holds a dimension for, unless `maxResetAfter` says
 * otherwise (`@sluice/core/LimiterInput`).
 *
 * @internal
 */
export const DEFAULT_MAX_RESET_AFTER_MILLIS = LimiterInput.DEFAULT_MAX_RESET_AFTER_MILLIS

/** Keys a limiter takes as given: its name, and the store it is handed. */
const limiterGiven = ["name", "store"]

/** @internal */
export const who = (name: unknown): string => OptionSchema.owner("rate limiter", name)

/** A bad option: a defect, since options are the program's own. @internal */
export const defect = (message: string) => Effect.die(new Cause.IllegalArgumentException(message))

/** @internal */
export const illegal = (name: string, message: string) => defect(`${who(name)}: ${message}`)

/** A take's own `maxWait`, or why not (without the limiter's name). @internal */
export const decodeMaxWait = OptionSchema.decodeOption(MaxWait, "maxWait")

/** @internal */
export const decodePause = OptionSchema.decodeOption(Pause, "pause")

/** An upstream's `resetAfter`: a bad one is ignored, with a warning. @internal */
export const decodeResetAfter = OptionSchema.decodeOption(Pause, "resetAfter")

/** @internal */
export interface Resolved {
  readonly limits: NonEmptyReadonlyArray<RateLimiter.ResolvedLimit>
  readonly specs: ReadonlyArray<RateLimiterStore.LimitSpec>
  readonly maxWaitMillis: number
  /** The bound of an upstream's `resetAfter` (`maxResetAfter`). */
  readonly maxResetAfterMillis: number
  /** The dimensions, each once, in the order of the limits. */
  readonly dimensions: NonEmptyReadonlyArray<string>
}

/** @internal */
export const defaultDimension = LimiterInput.DEFAULT_DIMENSION

const resolveLimit = (limit: Schema.Schema.Type<typeof Limit>): RateLimiter.ResolvedLimit => ({
  ...LimiterInput.limitDefaults(limit),
  limit: limit.limit,
  window: limit.window
})

/**
 * Checks the settings of a limiter; the error is a sentence naming `who`.
 *
 * @internal
 */
export const resolve = (settings: RateLimiter.Settings, who: string): Either.Either<Resolved, string> => {
  if (settings.limits !== undefined && (settings.limit !== undefined || settings.window !== undefined)) {
    return Either.left(LimiterMessages.bothShapes(who))
  }
  if (settings.limits !== undefined && (!Array.isArray(settings.limits) || settings.limits.length === 0)) {
    return Either.left(LimiterMessages.noLimits(who))
  }
  const decoded = settings.limits === undefined
    ? Either.map(OptionSchema.decodeEither(Single, who, limiterGiven)(settings), (single) => ({
      limits: [single],
      maxWait: single.maxWait,
      maxResetAfter: single.maxResetAfter
    }))
    : OptionSchema.decodeEither(Multi, who, limiterGiven)(settings)
  return Either.flatMap(decoded, (valid) => {
    const limits = Arr.map(valid.limits, resolveLimit)
    if (!Arr.isNonEmptyReadonlyArray(limits)) return Either.left(LimiterMessages.noLimits(who))
    const specs = limits.map((limit): RateLimiterStore.LimitSpec => ({
      algorithm: limit.algorithm,
      limit: limit.limit,
      windowMillis: Duration.toMillis(limit.window),
      burst: limit.burst
    }))
    const maxWaitMillis = valid.maxWait === undefined ? Number.POSITIVE_INFINITY : Duration.toMillis(valid.maxWait)
    const maxResetAfterMillis = valid.maxResetAfter === undefined
      ? DEFAULT_MAX_RESET_AFTER_MILLIS
      : Duration.toMillis(valid.maxResetAfter)
    return Either.right({
      limits,
      specs,
      maxWaitMillis,
      maxResetAfterMillis,
      dimensions: Arr.dedupe(Arr.map(limits, (l) => l.dimension))
    })
  })
}

/**
 * The keys of `Single` (LIMIT, WINDOW, BURST, ALGORITHM, MAX_WAIT, MAX_RESET_AFTER, DIMENSION), each read as text
 * and decoded through the same schema as the options; only a wholly absent section is missing data.
 *
 * @internal
 */
export const config: Config.Config<RateLimiter.Settings> = Config.map(
  OptionSchema.config(Single, "a rate limiter"),
  (settings): RateLimiter.Settings => ({ ...settings, algorithm: settings.algorithm ?? "gcra" })
)
