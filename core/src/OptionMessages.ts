/**
 * The sentences an option refusal is made of, and the strict readings of Config text, on plain
 * values: both Effect lines' `OptionSchema` build their messages here, so the same input gets
 * byte-identical messages on Effect 3 and Effect 4.
 *
 * @since 0.1.0
 */

/**
 * What a valid value is ("an integer ≥ 1"), completing "must be …", and why a refused value is
 * wrong when the value alone hides it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Rule {
  readonly rule: string
  readonly note?: ((actual: unknown) => string) | undefined
}

/**
 * A value as an error message shows it: strings quoted, NaN and ±Infinity by name (JSON prints
 * `null`), bigints with `n`, arrays element by element. `special` shows the binding's own values
 * (an Effect `Duration`, through `formatDuration`), or returns undefined for the rest.
 *
 * @since 0.1.0
 * @category formatting
 */
export const show = (u: unknown, special?: (u: unknown) => string | undefined): string => {
  const own = special?.(u)
  if (own !== undefined) return own
  if (typeof u === "string") return JSON.stringify(u)
  if (typeof u === "bigint") return `${u}n`
  if (Array.isArray(u)) return `[${u.map((element) => show(element, special)).join(", ")}]`
  if (typeof u === "object" && u !== null) {
    try {
      // JSON prints NaN and Infinity as null, which hides the mistake the message is about
      return JSON.stringify(
        u,
        (_, v: unknown) => typeof v === "bigint" || (typeof v === "number" && !Number.isFinite(v)) ? show(v) : v
      )
    } catch {
      return String(u)
    }
  }
  return String(u)
}

const units: ReadonlyArray<readonly [bigint, string]> = [
  [86_400_000_000_000n, "d"],
  [3_600_000_000_000n, "h"],
  [60_000_000_000n, "m"],
  [1_000_000_000n, "s"],
  [1_000_000n, "ms"],
  [1n, "ns"]
]

/**
 * A duration of `nanos` (undefined: infinite) as messages write it: `2s`, `1m 30s`, `1ms 500ns`,
 * `0`, `Infinity`. Ours rather than each major's `Duration.format`, so that both lines agree.
 *
 * @since 0.1.0
 * @category formatting
 */
export const formatDuration = (nanos: bigint | undefined): string => {
  if (nanos === undefined) return "Infinity"
  if (nanos === 0n) return "0"
  let rest = nanos
  const pieces: Array<string> = []
  for (const [size, unit] of units) {
    const count = rest / size
    rest %= size
    if (count !== 0n) pieces.push(`${count}${unit}`)
  }
  return pieces.join(" ")
}

/**
 * The owner of the options, as messages name it: `owner("bulkhead", "geo")` is `bulkhead "geo"`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const owner = (kind: string, name: unknown): string => `${kind} ${show(name)}`

/**
 * "must be <rule>, got <value>" for a value the rule refuses, `shown` as written.
 *
 * @since 0.1.0
 * @category formatting
 */
export const refusal = (rule: Rule, actual: unknown, shown: string): string =>
  `must be ${rule.rule}, got ${shown}${rule.note?.(actual) ?? ""}`

/**
 * The note of an integer past 2^53 - 1, which prints rounded and so looks like a valid count.
 *
 * @since 0.1.0
 * @category rules
 */
export const unsafeNote = (u: unknown): string =>
  typeof u === "number" && Number.isInteger(u) && !Number.isSafeInteger(u) && Number.isFinite(u)
    ? " (not a safe integer: above 2^53 - 1)"
    : ""

/**
 * The rule of `integer({ min, infinite })`.
 *
 * @since 0.1.0
 * @category rules
 */
export const integerRule = (options: { readonly min: number; readonly infinite?: boolean }): Rule => ({
  rule: `an integer ≥ ${options.min}${options.infinite === true ? " or Infinity" : ""}`,
  note: unsafeNote
})

/**
 * The rule of `number({ min, greaterThan, max })`: "finite" is said only when no `max` bounds it.
 *
 * @since 0.1.0
 * @category rules
 */
export const numberRule = (
  options: { readonly min?: number; readonly greaterThan?: number; readonly max?: number }
): Rule => {
  const { greaterThan, max, min } = options
  const bounds = [
    min !== undefined ? `≥ ${min}` : greaterThan !== undefined ? `> ${greaterThan}` : undefined,
    max !== undefined ? `≤ ${max}` : undefined
  ].filter((bound) => bound !== undefined)
  return {
    rule: `a ${max === undefined ? "finite " : ""}number${bounds.length === 0 ? "" : ` ${bounds.join(" and ")}`}`
  }
}

/**
 * Whether a number is within `number({ min, greaterThan, max })`'s bounds, and finite.
 *
 * @since 0.1.0
 * @category rules
 */
export const isWithin = (
  options: { readonly min?: number; readonly greaterThan?: number; readonly max?: number },
  n: number
): boolean =>
  Number.isFinite(n) && (options.min === undefined || n >= options.min) &&
  (options.greaterThan === undefined || n > options.greaterThan) && (options.max === undefined || n <= options.max)

/**
 * The rule of `duration({ zero, infinite })`.
 *
 * @since 0.1.0
 * @category rules
 */
export const durationRule = (options: { readonly zero: boolean; readonly infinite: boolean }): Rule => ({
  rule: `a ${options.infinite ? "" : "finite "}duration ${options.zero ? "≥ 0" : "> 0"}`
})

/**
 * Whether a duration input is negative or NaN, which is refused on both lines: Effect 3 reads
 * such an input as zero, Effect 4 as a negative duration; a budget written `-5` is a mistake.
 *
 * @since 0.1.0
 * @category rules
 */
export const isNegativeInput = (input: unknown): boolean => {
  if (typeof input === "number") return !(input >= 0)
  if (typeof input === "bigint") return input < 0n
  if (typeof input === "string") return input.trim().startsWith("-")
  if (Array.isArray(input)) return input.some((part) => !(typeof part === "number" && part >= 0))
  return false
}

/**
 * The rule of `literal(...values)`.
 *
 * @since 0.1.0
 * @category rules
 */
export const literalRule = (values: ReadonlyArray<string>): Rule => ({
  rule: `one of ${values.map((value) => show(value)).join(", ")}`
})

/**
 * The rules of `boolean` and `string`.
 *
 * @since 0.1.0
 * @category rules
 */
export const booleanRule: Rule = { rule: "true or false" }

/**
 * @since 0.1.0
 * @category rules
 */
export const stringRule: Rule = { rule: "a string" }

/**
 * Config text as a number, strictly: the whole text is a number ("12abc" is not 12, "" is not 0);
 * anything else stays text, to be refused as written.
 *
 * @since 0.1.0
 * @category config text
 */
export const numberFromText = (text: string): unknown =>
  /^\s*[+-]?(\d+\.?\d*(e[+-]?\d+)?|\.\d+(e[+-]?\d+)?|Infinity)\s*$/i.test(text) ? Number(text) : text

const booleanTexts: Record<string, boolean> = {
  true: true,
  yes: true,
  on: true,
  "1": true,
  false: false,
  no: false,
  off: false,
  "0": false
}

/**
 * Config text as a boolean: `true`/`false`, `yes`/`no`, `on`/`off`, `1`/`0`; anything else stays text.
 *
 * @since 0.1.0
 * @category config text
 */
export const booleanFromText = (text: string): unknown => booleanTexts[text.trim().toLowerCase()] ?? text

/**
 * Config text as a duration input, trimmed; `Infinity` as the number, since a Config key has no
 * other way to write infinity.
 *
 * @since 0.1.0
 * @category config text
 */
export const durationFromText = (text: string): unknown => text.trim() === "Infinity" ? Infinity : text.trim()

/**
 * A path as the user writes it: `retry.backoff.initial`, `limits[1].window`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.map((key, i) => typeof key === "number" ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`).join("")

/**
 * An option's Config key: `maxWait` is `MAX_WAIT`, `retryAfter.min` is `RETRY_AFTER_MIN`.
 *
 * @since 0.1.0
 * @category config text
 */
export const keyOf = (path: ReadonlyArray<string>): string =>
  path.map((name) => name.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()).join("_")

/**
 * The message of a wholly absent Config section that is required.
 *
 * @since 0.1.0
 * @category config text
 */
export const missingSection = (key: string, what: string): string => `Expected ${key} to exist: ${what} needs it`

/**
 * The message of a Config section set in part: a bound silently dropped is worse than an error.
 *
 * @since 0.1.0
 * @category config text
 */
export const partialSection = (key: string, set: ReadonlyArray<string>, what: string): string =>
  `${key} is missing while ${set.join(", ")} ${set.length === 1 ? "is" : "are"} set: ` +
  `${what} is configured whole or not at all`

/**
 * A refusal from a rule across keys, with the options it names written as their Config keys.
 *
 * @since 0.1.0
 * @category config text
 */
export const withKeys = (message: string, paths: ReadonlyArray<ReadonlyArray<string>>): string =>
  paths.reduce(
    (text, path) => text.replace(new RegExp(`\\b${path.join("\\.")}\\b`, "g"), keyOf(path)),
    message
  )

/**
 * The refusal of an option schema used where a Config key needs one.
 *
 * @since 0.1.0
 * @category config text
 */
export const notAnOption = (key: string): string => `${key}: a Config key needs an OptionSchema schema`

/** Edit distance (insertions, deletions, substitutions, adjacent swaps) between two keys. */
const distance = (a: string, b: string): number => {
  const rows: Array<Array<number>> = Array.from({ length: a.length + 1 }, (_, i) => [i])
  for (let j = 1; j <= b.length; j++) rows[0][j] = j
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1)
      }
    }
  }
  return rows[a.length][b.length]
}

/**
 * The one known key within an edit distance of 2 of `key` and closer than any other, if any: a
 * guess between two equally close keys would mislead.
 *
 * @since 0.1.0
 * @category formatting
 */
export const closestKey = (key: string, known: ReadonlyArray<string>): string | undefined => {
  const scored = known.map((candidate) => [candidate, distance(key, candidate)] as const)
    .filter(([, d]) => d <= 2)
  if (scored.length === 0) return undefined
  const best = Math.min(...scored.map(([, d]) => d))
  const closest = scored.filter(([, d]) => d === best)
  return closest.length === 1 ? closest[0][0] : undefined
}

/**
 * The refusal of a key the options do not have, at `path` (`circuitBreaker.consecutiveFailure`),
 * with the known key it is likely a misspelling of: a misspelled option silently ignored would
 * drop the bound it meant to set.
 *
 * @since 0.1.0
 * @category formatting
 */
export const unknownOption = (path: ReadonlyArray<PropertyKey>, known: ReadonlyArray<string>): string => {
  const key = path[path.length - 1]
  const guess = typeof key === "string" ? closestKey(key, known) : undefined
  const suggestion = guess === undefined ? "" : ` (did you mean ${formatPath([...path.slice(0, -1), guess])}?)`
  return `unknown option ${formatPath(path)}${suggestion}`
}

const isPlainRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u) && Object.getPrototypeOf(u) === Object.prototype

/**
 * The options without the keys at `given` (`"name"`, `"retry.isRetryable"`): keys the caller
 * takes as given or another decoder checks, so that a strict decode refuses only the unknown.
 *
 * @since 0.1.0
 * @category formatting
 */
export const withoutGiven = (input: unknown, given: ReadonlyArray<string>): unknown => {
  if (given.length === 0 || !isPlainRecord(input)) return input
  const out: Record<string, unknown> = { ...input }
  const nested = new Map<string, Array<string>>()
  for (const path of given) {
    const dot = path.indexOf(".")
    if (dot === -1) delete out[path]
    else nested.set(path.slice(0, dot), [...(nested.get(path.slice(0, dot)) ?? []), path.slice(dot + 1)])
  }
  for (const [head, rest] of nested) {
    if (head in out) out[head] = withoutGiven(out[head], rest)
  }
  return out
}

/**
 * The given keys (as `withoutGiven` takes them) of the record at `path`: known keys too, for
 * the guess of a misspelling.
 *
 * @since 0.1.0
 * @category formatting
 */
export const givenAt = (given: ReadonlyArray<string>, path: ReadonlyArray<PropertyKey>): ReadonlyArray<string> => {
  const prefix = path.map(String).join(".")
  return given.flatMap((key) => {
    const dot = key.lastIndexOf(".")
    const parent = dot === -1 ? "" : key.slice(0, dot)
    return parent === prefix ? [key.slice(dot + 1)] : []
  })
}
