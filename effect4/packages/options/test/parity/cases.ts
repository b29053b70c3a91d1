/**
 * The parity table: the same inputs for both lines' `OptionSchema`, as functions of a line's
 * own modules (passed in, so that this file imports no `effect` of its own). Each line prints a
 * message per case; `parity.test.ts` compares them byte for byte.
 */
import type { OptionSchema as Options } from "@sluice/options"
import type * as Duration from "effect/Duration"
import type * as Schema from "effect/Schema"

/** A line's modules: the calls below have the same names and meanings on Effect 3 and 4. */
export interface Line {
  readonly OptionSchema: typeof Options
  readonly Schema: typeof Schema
  readonly Duration: typeof Duration
  /** the line's decoder of one value: the refusal, or undefined when accepted */
  readonly refuse: (schema: Schema.Codec<unknown, unknown>, who: string, input: unknown) => string | undefined
}

type Case = readonly [label: string, schema: Schema.Codec<unknown, unknown>, input: unknown]

/** Every refused form of OptionSchema.test.ts, on both lines. */
export const cases = ({ Duration, OptionSchema, Schema }: Line): ReadonlyArray<Case> => {
  const count = OptionSchema.integer({ min: 1 })
  const bound = OptionSchema.integer({ min: 0, infinite: true })
  const wait = OptionSchema.duration({ zero: true, infinite: true })
  const timeout = OptionSchema.duration({ zero: false, infinite: false })
  const order = OptionSchema.literal("fifo", "lifo")
  const ratio = OptionSchema.number({ greaterThan: 0, max: 1 })
  const Nested = Schema.Struct({
    retry: Schema.optional(Schema.Struct({
      backoff: Schema.optional(Schema.Struct({ initial: OptionSchema.duration({ zero: true, infinite: false }) }))
    })),
    limits: Schema.optional(Schema.Array(Schema.Struct({ limit: count })))
  })
  const rows: Array<Case> = [
    ...[0, -2, 1.5, NaN, Infinity, -Infinity, "3", undefined, null, 2 ** 60, 5n, [1]].map((input): Case => [
      "integer ≥ 1",
      count,
      input
    ]),
    ["integer ≥ 0 or Infinity", bound, NaN],
    ["integer ≥ 0 or Infinity", bound, -1],
    ...[0, NaN, -1, Infinity].map((input): Case => ["positive", OptionSchema.positive, input]),
    ...[-1, Infinity, "0"].map((input): Case => ["nonNegative", OptionSchema.nonNegative, input]),
    ["number > 0 and ≤ 1", ratio, 1.5],
    ["number ≥ 1", OptionSchema.number({ min: 1 }), 0.5],
    ...[-5, -1n, "-5 seconds", "-1 millis", [-1, 0], [0, -1], [0, NaN], NaN, -Infinity, "soon", {}, [1, 2, 3], {
      a: NaN
    }].map((input): Case => ["duration ≥ 0", wait, input]),
    ...[0, "0 millis", Infinity, Duration.infinity, Duration.zero, [0, 0]].map((input): Case => [
      "finite duration > 0",
      timeout,
      input
    ]),
    ["duration > 0", OptionSchema.duration({ zero: false, infinite: true }), [0, 0]],
    ["literal", order, "LIFO"],
    ["literal", order, NaN],
    ["boolean", OptionSchema.boolean, "yes"],
    ["string", OptionSchema.string, 1],
    ["path", Nested, { retry: { backoff: { initial: "-1 millis" } } }],
    ["path", Nested, { limits: [{ limit: 1 }, { limit: 0 }] }],
    ["path", Nested, { retry: { backoff: {} } }],
    ["path", Nested, { retry: { backoff: { initial: Duration.seconds(90) } }, limits: [{ limit: 1.5 }] }]
  ]
  return rows
}

/** The Config keys of the table: each line reads them as a `GEO` section of `Settings`. */
export const configCases: ReadonlyArray<Readonly<Record<string, string>>> = [
  { PERMITS: "0" },
  { PERMITS: "12abc" },
  { PERMITS: "1.5" },
  { PERMITS: "1152921504606846976" },
  { PERMITS: "1", MAX_WAIT: "-5 seconds" },
  { PERMITS: "1", MAX_WAIT: "soon" },
  { PERMITS: "1", ORDER: "random" },
  { PERMITS: "1", SHARED: "maybe" },
  { PERMITS: "1", RETRY_AFTER_MIN: "Infinity" },
  { PERMITS: "1", RETRY_AFTER_RATIO: "2" },
  { MAX_WAIT: "2 seconds" },
  { ORDER: "fifo", RETRY_AFTER_MIN: "1 second" }
]

/** The options record the Config cases read. */
export const settings = ({ OptionSchema, Schema }: Line) =>
  Schema.Struct({
    permits: OptionSchema.integer({ min: 1 }),
    maxWaiting: Schema.optional(OptionSchema.integer({ min: 0, infinite: true })),
    maxWait: Schema.optional(OptionSchema.duration({ zero: true, infinite: true })),
    order: Schema.optional(OptionSchema.literal("fifo", "lifo")),
    shared: Schema.optional(OptionSchema.boolean),
    retryAfter: Schema.optional(Schema.Struct({
      min: Schema.optional(OptionSchema.duration({ zero: true, infinite: false })),
      ratio: Schema.optional(OptionSchema.number({ min: 0, max: 1 }))
    }))
  })
