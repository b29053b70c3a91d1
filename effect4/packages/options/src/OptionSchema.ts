/**
 * The schemas every sluice package decodes its options with, and the `Config` derived from the
 * same schemas, so that options and Config can never disagree.
 *
 * Each option schema carries its rule ("an integer ≥ 1", "a duration ≥ 0"), and every refusal is
 * one sentence: `<owner> "<name>": <option> must be <rule>, got <value as written>` (NaN and
 * Infinity by name, strings quoted). A package declares its options record once, as a
 * `Schema.Struct` of these schemas, and gets both its decoder and its Config section from it.
 *
 * @since 2.0.0
 */
import type * as Config from "effect/Config"
import type * as Duration from "effect/Duration"
import type * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import * as internal from "./internal/optionSchema.js"

/**
 * What makes a schema an option schema (see `make`): its rule, for messages, and how its `Config`
 * key's text is read.
 *
 * @since 2.0.0
 * @category annotations
 */
export interface Rule {
  /** What a valid value is, completing "must be …": `an integer ≥ 1`. */
  readonly rule: string
  /** Why a refused value is wrong when the value alone hides it (` (not a safe integer: …)`). */
  readonly note?: ((actual: unknown) => string) | undefined
  /** A Config key's text as the value the schema decodes: strict, "12abc" stays text. */
  readonly fromText: (text: string) => unknown
}

/**
 * A value as an error message shows it: strings quoted, NaN and ±Infinity by name (JSON prints
 * `null`), bigints with `n`, arrays element by element, durations formatted.
 *
 * @since 2.0.0
 * @category formatting
 */
export const show: (u: unknown) => string = internal.show

/**
 * The owner of the options, as messages name it: `owner("bulkhead", "geo")` is `bulkhead "geo"`.
 *
 * @since 2.0.0
 * @category formatting
 */
export const owner: (kind: string, name: unknown) => string = internal.owner

/**
 * "must be <rule>, got <value>" for a value the rule refuses, `shown` as written.
 *
 * @since 2.0.0
 * @category formatting
 */
export const refusal: (rule: Rule, actual: unknown, shown?: string) => string = internal.refusal

/**
 * Makes any schema an option schema, for a rule of a package's own (a URL, say).
 *
 * @since 2.0.0
 * @category constructors
 */
export const make: <A, I>(schema: Schema.Codec<A, I>, rule: Rule) => Schema.Codec<A, I> = internal.make

/**
 * A safe integer ≥ `min` (with `infinite`, Infinity too). NaN, Infinity, fractions and integers
 * past 2^53 - 1 are refused: past it a count is no longer exact.
 *
 * @since 2.0.0
 * @category schemas
 */
export const integer: (options: { readonly min: number; readonly infinite?: boolean }) => Schema.Codec<number> =
  internal.integer

/**
 * A finite number within the bounds given: `number({ min: 1 })`, `number({ greaterThan: 0, max: 1 })`.
 *
 * @since 2.0.0
 * @category schemas
 */
export const number: (
  options: { readonly min?: number; readonly greaterThan?: number; readonly max?: number }
) => Schema.Codec<number> = internal.number

/**
 * A finite number > 0.
 *
 * @since 2.0.0
 * @category schemas
 */
export const positive: Schema.Codec<number> = internal.number({ greaterThan: 0 })

/**
 * A finite number ≥ 0.
 *
 * @since 2.0.0
 * @category schemas
 */
export const nonNegative: Schema.Codec<number> = internal.number({ min: 0 })

/**
 * A duration in any `Duration.Input` form (millis, bigint nanos, `"5 seconds"`,
 * `[seconds, nanos]`, a `Duration`). Effect 4 reads a negative input as a negative duration and
 * NaN as zero; a budget written `-5` is a mistake, so both are refused. `zero` and `infinite` say whether 0 and infinity
 * are allowed.
 *
 * @since 2.0.0
 * @category schemas
 */
export const duration: (
  options: { readonly zero: boolean; readonly infinite: boolean }
) => Schema.Codec<Duration.Duration, Duration.Input> = internal.duration

/**
 * One of the given strings.
 *
 * @since 2.0.0
 * @category schemas
 */
export const literal: <const L extends readonly [string, ...Array<string>]>(...values: L) => Schema.Codec<L[number]> =
  internal.literal

/**
 * A boolean; as Config text, `true`/`false`, `yes`/`no`, `on`/`off`, `1`/`0`.
 *
 * @since 2.0.0
 * @category schemas
 */
export const boolean: Schema.Codec<boolean> = internal.boolean

/**
 * A string.
 *
 * @since 2.0.0
 * @category schemas
 */
export const string: Schema.Codec<string> = internal.string

/**
 * A decoder of options: the first refusal as a sentence, `<who>: <path> must be <rule>, got <value>`
 * (the Effect 3 line's `decodeEither`). A key the schema does not have is refused
 * (`<who>: unknown option <path> (did you mean <key>?)`), but for the `given` ones (`"name"`,
 * `"retry.isRetryable"`), which the caller checks itself.
 *
 * @since 2.0.0
 * @category decoding
 */
export const decodeResult: <A, I>(
  schema: Schema.Codec<A, I>,
  who: string,
  given?: ReadonlyArray<string>
) => (input: unknown) => Result.Result<A, string> = internal.decodeResult

/**
 * A decoder of one option on its own: `<option> must be <rule>, got <value>`, for a caller that
 * adds its owner.
 *
 * @since 2.0.0
 * @category decoding
 */
export const decodeOption: <A, I>(
  schema: Schema.Codec<A, I>,
  option: string
) => (input: unknown) => Result.Result<A, string> = internal.decodeOption

/**
 * As `decodeResult`, throwing the refusal as an `IllegalArgumentError` (a defect: options
 * are the program's own, not its input).
 *
 * @example
 * ```ts
 * import { OptionSchema } from "@sluice/options"
 * import { Schema } from "effect"
 *
 * const Options = Schema.Struct({
 *   permits: OptionSchema.integer({ min: 1 }),
 *   maxWait: Schema.optional(OptionSchema.duration({ zero: true, infinite: true }))
 * })
 * const decode = OptionSchema.decodeSync(Options, OptionSchema.owner("bulkhead", "geo"))
 * decode({ permits: 0 }) // throws: bulkhead "geo": permits must be an integer ≥ 1, got 0
 * ```
 *
 * @since 2.0.0
 * @category decoding
 */
export const decodeSync: <A, I>(
  schema: Schema.Codec<A, I>,
  who: string,
  given?: ReadonlyArray<string>
) => (input: unknown) => A = internal.decodeSync

/**
 * One Config key decoded through an option schema (a `Config.schema` of the key's text): read
 * strictly ("12abc" is not 12), refused with the text as written.
 *
 * @since 2.0.0
 * @category config
 */
export const configKey: <A, I>(schema: Schema.Codec<A, I>, key: string) => Config.Config<A> = internal.configKey

/**
 * A whole options record as a Config section: each field is the key of its path in
 * UPPER_SNAKE_CASE (`maxWait` is `MAX_WAIT`, `retryAfter.min` is `RETRY_AFTER_MIN`), read as text
 * and decoded through the same schema. Only a wholly absent section is missing data (so
 * `Config.option` reads it as none); a section with a required key missing is invalid data naming
 * that key and the keys that are set. `what` names the section's owner in that message.
 *
 * @since 2.0.0
 * @category config
 */
export const config: <A, I>(schema: Schema.Codec<A, I>, what: string) => Config.Config<A> = internal.config
