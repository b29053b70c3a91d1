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
export * as OptionSchema from "./OptionSchema.js"
