/** @internal */
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import type * as Api from "../OptionSchema.js"

/** @internal */
export const RuleId: unique symbol = Symbol.for("@sluice/options/Rule")

/** @internal */
export const show = (u: unknown): string => {
  if (typeof u === "string") return JSON.stringify(u)
  if (typeof u === "bigint") return `${u}n`
  if (Array.isArray(u)) return `[${u.map(show).join(", ")}]`
  if (Duration.isDuration(u)) return Duration.format(u) || "0ms"
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

/** @internal */
export const owner = (kind: string, name: unknown): string => `${kind} ${show(name)}`

/** @internal */
export const refusal = (rule: Api.Rule, actual: unknown, shown = show(actual)): string =>
  `must be ${rule.rule}, got ${shown}${rule.note?.(actual) ?? ""}`

/** @internal */
export const make = <A, I>(schema: Schema.Schema<A, I>, rule: Api.Rule): Schema.Schema<A, I> =>
  schema.annotations({
    [RuleId]: rule,
    // override: a value of the wrong type gets the same sentence as one out of range
    message: (issue) => ({ message: refusal(rule, issue.actual), override: true })
  })

const identity = (text: string): unknown => text

/** Strict: the whole text is a number ("12abc" is not 12, "" is not 0); anything else stays text. */
const numberFromText = (text: string): unknown =>
  /^\s*[+-]?(\d+\.?\d*(e[+-]?\d+)?|\.\d+(e[+-]?\d+)?|Infinity)\s*$/i.test(text) ? Number(text) : text

const unsafeNote = (u: unknown): string =>
  typeof u === "number" && Number.isInteger(u) && !Number.isSafeInteger(u) && Number.isFinite(u)
    ? " (not a safe integer: above 2^53 - 1)"
    : ""

/** @internal */
export const integer = (options: { readonly min: number; readonly infinite?: boolean }): Schema.Schema<number> =>
  make(
    Schema.Number.pipe(
      Schema.filter((n) =>
        (Number.isSafeInteger(n) && n >= options.min) || (options.infinite === true && n === Infinity)
      )
    ),
    {
      rule: `an integer ≥ ${options.min}${options.infinite === true ? " or Infinity" : ""}`,
      note: unsafeNote,
      fromText: numberFromText
    }
  )

/** @internal */
export const number = (
  options: { readonly min?: number; readonly greaterThan?: number; readonly max?: number }
): Schema.Schema<number> => {
  const { greaterThan, max, min } = options
  const bounds = [
    min !== undefined ? `≥ ${min}` : greaterThan !== undefined ? `> ${greaterThan}` : undefined,
    max !== undefined ? `≤ ${max}` : undefined
  ].filter((bound) => bound !== undefined)
  return make(
    Schema.Number.pipe(
      Schema.filter((n) =>
        Number.isFinite(n) && (min === undefined || n >= min) && (greaterThan === undefined || n > greaterThan) &&
        (max === undefined || n <= max)
      )
    ),
    {
      rule: `a ${max === undefined ? "finite " : ""}number${bounds.length === 0 ? "" : ` ${bounds.join(" and ")}`}`,
      fromText: numberFromText
    }
  )
}

const isDurationInput = (u: unknown): u is Duration.DurationInput =>
  Duration.isDuration(u) || typeof u === "number" || typeof u === "bigint" || typeof u === "string" ||
  (Array.isArray(u) && u.length === 2 && u.every((part) => typeof part === "number"))

/** Effect's `Duration` reads `-5`, `"-5 seconds"`, `[-1, 0]` and NaN as zero: here they are refused. */
const isNegative = (input: Duration.DurationInput): boolean => {
  if (typeof input === "number") return !(input >= 0)
  if (typeof input === "bigint") return input < BigInt(0)
  if (typeof input === "string") return input.trim().startsWith("-")
  if (Array.isArray(input)) return input.some((part) => !(part >= 0))
  return false
}

const DurationInput = Schema.declare(isDurationInput)

/** @internal */
export const duration = (
  options: { readonly zero: boolean; readonly infinite: boolean }
): Schema.Schema<Duration.Duration, Duration.DurationInput> =>
  make(
    Schema.transformOrFail(DurationInput, Schema.DurationFromSelf, {
      strict: true,
      decode: (input, _, ast) => {
        const decoded = isNegative(input) ? Option.none() : Duration.decodeUnknown(input)
        return Option.isSome(decoded) &&
            (options.zero || Duration.greaterThan(decoded.value, Duration.zero)) &&
            (options.infinite || Duration.isFinite(decoded.value))
          ? ParseResult.succeed(decoded.value)
          : ParseResult.fail(new ParseResult.Type(ast, input))
      },
      encode: ParseResult.succeed
    }),
    {
      rule: `a ${options.infinite ? "" : "finite "}duration ${options.zero ? "≥ 0" : "> 0"}`,
      // a Config key has no number to write infinity with
      fromText: (text) => text.trim() === "Infinity" ? Infinity : text.trim()
    }
  )

/** @internal */
export const literal = <const L extends readonly [string, ...Array<string>]>(
  ...values: L
): Schema.Schema<L[number]> =>
  make(Schema.Literal(...values), { rule: `one of ${values.map(show).join(", ")}`, fromText: identity })

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

/** @internal */
export const boolean: Schema.Schema<boolean> = make(Schema.Boolean, {
  rule: "true or false",
  fromText: (text) => booleanTexts[text.trim().toLowerCase()] ?? text
})

/** @internal */
export const string: Schema.Schema<string> = make(Schema.String, { rule: "a string", fromText: identity })

/** A path as the user writes it: `retry.backoff.initial`, `limits[1].window`. */
const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.map((key, i) => typeof key === "number" ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`).join("")

const firstIssue = (error: ParseResult.ParseError): ParseResult.ArrayFormatterIssue =>
  ParseResult.ArrayFormatter.formatErrorSync(error)[0]

/** @internal */
export const decodeEither = <A, I>(
  schema: Schema.Schema<A, I>,
  who: string
): (input: unknown) => Either.Either<A, string> => {
  const decode = Schema.decodeUnknownEither(schema)
  return (input) =>
    Either.mapLeft(decode(input), (error) => {
      const issue = firstIssue(error)
      return `${who}: ${issue.path.length === 0 ? "" : `${formatPath(issue.path)} `}${issue.message}`
    })
}

/** @internal */
export const decodeOption = <A, I>(
  schema: Schema.Schema<A, I>,
  option: string
): (input: unknown) => Either.Either<A, string> => {
  const decode = Schema.decodeUnknownEither(schema)
  return (input) => Either.mapLeft(decode(input), (error) => `${option} ${firstIssue(error).message}`)
}

/** @internal */
export const decodeSync = <A, I>(schema: Schema.Schema<A, I>, who: string): (input: unknown) => A => {
  const decode = decodeEither(schema, who)
  return (input) => Either.getOrThrowWith(decode(input), (message) => new Cause.IllegalArgumentException(message))
}

const ruleOf = (ast: AST.AST): Api.Rule | undefined => {
  const rule = AST.getAnnotation<Api.Rule>(ast, RuleId)
  if (Option.isSome(rule)) return rule.value
  // an optional field is `S | undefined`
  return AST.isUnion(ast) ? ast.types.map(ruleOf).find((r) => r !== undefined) : undefined
}

const requireRule = (schema: Schema.Schema.Any, key: string): Api.Rule => {
  const rule = ruleOf(schema.ast)
  if (rule === undefined) throw new Cause.IllegalArgumentException(`${key}: a Config key needs an OptionSchema schema`)
  return rule
}

/** @internal */
export const configKey = <A, I>(schema: Schema.Schema<A, I>, key: string): Config.Config<A> => {
  const rule = requireRule(schema, key)
  const decode = Schema.decodeUnknownEither(schema)
  return Config.mapOrFail(Config.string(key), (text) => {
    const value = rule.fromText(text)
    return Either.mapLeft(
      decode(value),
      () => ConfigError.InvalidData([], `${key} ${refusal(rule, value, show(text))}`)
    )
  })
}

/** `maxWait` → `MAX_WAIT`, `retryAfter.min` → `RETRY_AFTER_MIN`. */
const keyOf = (path: ReadonlyArray<string>): string =>
  path.map((name) => name.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()).join("_")

interface Leaf {
  readonly path: ReadonlyArray<string>
  readonly key: string
  readonly required: boolean
  readonly rule: Api.Rule
}

/** The options' leaves, nested records flattened (`retryAfter: { min }` is the key `RETRY_AFTER_MIN`). */
const leavesOf = (ast: AST.AST, at: ReadonlyArray<string>, required: boolean): ReadonlyArray<Leaf> =>
  AST.getPropertySignatures(ast).flatMap((property) => {
    const path = [...at, String(property.name)]
    const rule = ruleOf(property.type)
    if (rule !== undefined) return [{ path, key: keyOf(path), required: required && !property.isOptional, rule }]
    const record = AST.isUnion(property.type)
      ? property.type.types.find((member) => AST.getPropertySignatures(member).length > 0)
      : property.type
    if (record === undefined || AST.getPropertySignatures(record).length === 0) {
      throw new Cause.IllegalArgumentException(`${keyOf(path)}: a Config key needs an OptionSchema schema`)
    }
    return leavesOf(record, path, required && !property.isOptional)
  })

const setIn = (target: Record<string, unknown>, path: ReadonlyArray<string>, value: unknown): void => {
  const [head, ...rest] = path
  if (rest.length === 0) {
    target[head] = value
    return
  }
  const existing = target[head]
  const child: Record<string, unknown> = Predicate.isRecord(existing) ? existing : {}
  target[head] = child
  setIn(child, rest, value)
}

/** @internal */
export const config = <A, I>(schema: Schema.Schema<A, I>, what: string): Config.Config<A> => {
  const leaves = leavesOf(schema.ast, [], true)
  const decode = Schema.decodeUnknownEither(schema)
  return Config.all(leaves.map((leaf) => Config.option(Config.string(leaf.key)))).pipe(
    Config.mapOrFail((texts) => {
      const present = leaves.filter((_, i) => Option.isSome(texts[i]))
      const missing = leaves.find((leaf) => leaf.required && !present.includes(leaf))
      if (missing !== undefined) {
        // only a wholly absent section is "not configured" (missing data, which `Config.option`
        // reads as none); a section set in part is a mistake, never a bound silently dropped
        const set = present.map((leaf) => leaf.key)
        return Either.left(
          set.length === 0
            ? ConfigError.MissingData([missing.key], `Expected ${missing.key} to exist: ${what} needs it`)
            : ConfigError.InvalidData(
              [missing.key],
              `${missing.key} is missing while ${set.join(", ")} ${set.length === 1 ? "is" : "are"} set: ` +
                `${what} is configured whole or not at all`
            )
        )
      }
      const raw: Record<string, unknown> = {}
      leaves.forEach((leaf, i) => Option.map(texts[i], (text) => setIn(raw, leaf.path, leaf.rule.fromText(text))))
      return Either.mapLeft(decode(raw), (error) => {
        const issue = firstIssue(error)
        const at = issue.path.map(String).join(".")
        const index = leaves.findIndex((leaf) => leaf.path.join(".") === at)
        if (index === -1) return ConfigError.InvalidData([], `${formatPath(issue.path)} ${issue.message}`)
        const leaf = leaves[index]
        const text = Option.getOrElse(texts[index], () => "")
        const value = leaf.rule.fromText(text)
        // the key's own rule, shown with the text as written; a rule across keys keeps its
        // sentence, with the options it names written as their keys
        return ConfigError.InvalidData(
          [leaf.key],
          `${leaf.key} ${
            issue.message === refusal(leaf.rule, value)
              ? refusal(leaf.rule, value, show(text))
              : leaves.reduce(
                (message, other) => message.replace(new RegExp(`\\b${other.path.join("\\.")}\\b`, "g"), other.key),
                issue.message
              )
          }`
        )
      })
    })
  )
}
