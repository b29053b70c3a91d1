/** @internal */
import { OptionMessages } from "@sluice/core"
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

/** Durations by the core's format, so that both Effect lines print them alike. */
const showDuration = (u: unknown): string | undefined =>
  Duration.isDuration(u) ? OptionMessages.formatDuration(Option.getOrUndefined(Duration.toNanos(u))) : undefined

/** @internal */
export const show = (u: unknown): string => OptionMessages.show(u, showDuration)

/** @internal */
export const owner = (kind: string, name: unknown): string => OptionMessages.owner(kind, name)

/** @internal */
export const refusal = (rule: Api.Rule, actual: unknown, shown = show(actual)): string =>
  OptionMessages.refusal(rule, actual, shown)

/** @internal */
export const make = <A, I>(schema: Schema.Schema<A, I>, rule: Api.Rule): Schema.Schema<A, I> =>
  schema.annotations({
    [RuleId]: rule,
    // override: a value of the wrong type gets the same sentence as one out of range
    message: (issue) => ({ message: refusal(rule, issue.actual), override: true })
  })

const identity = (text: string): unknown => text

/** @internal */
export const integer = (options: { readonly min: number; readonly infinite?: boolean }): Schema.Schema<number> =>
  make(
    Schema.Number.pipe(
      Schema.filter((n) =>
        (Number.isSafeInteger(n) && n >= options.min) || (options.infinite === true && n === Infinity)
      )
    ),
    { ...OptionMessages.integerRule(options), fromText: OptionMessages.numberFromText }
  )

/** @internal */
export const number = (
  options: { readonly min?: number; readonly greaterThan?: number; readonly max?: number }
): Schema.Schema<number> =>
  make(Schema.Number.pipe(Schema.filter((n) => OptionMessages.isWithin(options, n))), {
    ...OptionMessages.numberRule(options),
    fromText: OptionMessages.numberFromText
  })

const isDurationInput = (u: unknown): u is Duration.DurationInput =>
  Duration.isDuration(u) || typeof u === "number" || typeof u === "bigint" || typeof u === "string" ||
  (Array.isArray(u) && u.length === 2 && u.every((part) => typeof part === "number"))

const DurationInput = Schema.declare(isDurationInput)

/** @internal */
export const duration = (
  options: { readonly zero: boolean; readonly infinite: boolean }
): Schema.Schema<Duration.Duration, Duration.DurationInput> =>
  make(
    Schema.transformOrFail(DurationInput, Schema.DurationFromSelf, {
      strict: true,
      decode: (input, _, ast) => {
        const decoded = OptionMessages.isNegativeInput(input) ? Option.none() : Duration.decodeUnknown(input)
        return Option.isSome(decoded) &&
            (options.zero || Duration.greaterThan(decoded.value, Duration.zero)) &&
            (options.infinite || Duration.isFinite(decoded.value))
          ? ParseResult.succeed(decoded.value)
          : ParseResult.fail(new ParseResult.Type(ast, input))
      },
      encode: ParseResult.succeed
    }),
    { ...OptionMessages.durationRule(options), fromText: OptionMessages.durationFromText }
  )

/** @internal */
export const literal = <const L extends readonly [string, ...Array<string>]>(
  ...values: L
): Schema.Schema<L[number]> =>
  make(Schema.Literal(...values), { ...OptionMessages.literalRule(values), fromText: identity })

/** @internal */
export const boolean: Schema.Schema<boolean> = make(Schema.Boolean, {
  ...OptionMessages.booleanRule,
  fromText: OptionMessages.booleanFromText
})

/** @internal */
export const string: Schema.Schema<string> = make(Schema.String, { ...OptionMessages.stringRule, fromText: identity })

const formatPath = OptionMessages.formatPath

const firstIssue = (error: ParseResult.ParseError): ParseResult.ArrayFormatterIssue =>
  ParseResult.ArrayFormatter.formatErrorSync(error)[0]

/** A key the options do not have is refused: a misspelled option ignored would drop its bound. */
const strict: AST.ParseOptions = { onExcessProperty: "error" }

interface Unknown {
  readonly path: ReadonlyArray<PropertyKey>
  readonly known: ReadonlyArray<string>
}

/** The first key refused as excess, with the keys its record has, walking the issues in order. */
const firstUnknown = (
  issue: ParseResult.ParseIssue,
  path: ReadonlyArray<PropertyKey>,
  known: ReadonlyArray<string>
): Unknown | undefined => {
  switch (issue._tag) {
    case "Unexpected":
      return { path, known }
    case "Pointer":
      return firstUnknown(issue.issue, [...path, ...(Array.isArray(issue.path) ? issue.path : [issue.path])], known)
    case "Composite": {
      const keys = AST.isTypeLiteral(issue.ast)
        ? issue.ast.propertySignatures.map((property) => String(property.name))
        : known
      const issues = Array.isArray(issue.issues) ? issue.issues : [issue.issues as ParseResult.ParseIssue]
      for (const inner of issues) {
        const found = firstUnknown(inner, path, keys)
        if (found !== undefined) return found
      }
      return undefined
    }
    case "Refinement":
    case "Transformation":
      return firstUnknown(issue.issue, path, known)
    default:
      return undefined
  }
}

/** The first refusal, at its path; a key the options do not have is named with its likely spelling. */
const refusalOf = (
  error: ParseResult.ParseError,
  given: ReadonlyArray<string>
): { readonly path: string; readonly message: string } => {
  const issue = firstIssue(error)
  const unknown = issue._tag === "Unexpected" ? firstUnknown(error.issue, [], []) : undefined
  if (unknown !== undefined) {
    const known = [...unknown.known, ...OptionMessages.givenAt(given, unknown.path.slice(0, -1))]
    return { path: "", message: OptionMessages.unknownOption(unknown.path, known) }
  }
  return { path: issue.path.length === 0 ? "" : `${formatPath(issue.path)} `, message: issue.message }
}

/** @internal */
export const decodeEither = <A, I>(
  schema: Schema.Schema<A, I>,
  who: string,
  given: ReadonlyArray<string> = []
): (input: unknown) => Either.Either<A, string> => {
  const decode = Schema.decodeUnknownEither(schema, strict)
  return (input) =>
    Either.mapLeft(decode(OptionMessages.withoutGiven(input, given)), (error) => {
      const refused = refusalOf(error, given)
      return `${who}: ${refused.path}${refused.message}`
    })
}

/** @internal */
export const decodeOption = <A, I>(
  schema: Schema.Schema<A, I>,
  option: string
): (input: unknown) => Either.Either<A, string> => {
  const decode = Schema.decodeUnknownEither(schema, strict)
  return (input) => Either.mapLeft(decode(input), (error) => `${option} ${refusalOf(error, []).message}`)
}

/** @internal */
export const decodeSync = <A, I>(
  schema: Schema.Schema<A, I>,
  who: string,
  given: ReadonlyArray<string> = []
): (input: unknown) => A => {
  const decode = decodeEither(schema, who, given)
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
  if (rule === undefined) throw new Cause.IllegalArgumentException(OptionMessages.notAnOption(key))
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

const keyOf = OptionMessages.keyOf

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
      throw new Cause.IllegalArgumentException(OptionMessages.notAnOption(keyOf(path)))
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
            ? ConfigError.MissingData([missing.key], OptionMessages.missingSection(missing.key, what))
            : ConfigError.InvalidData([missing.key], OptionMessages.partialSection(missing.key, set, what))
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
              : OptionMessages.withKeys(issue.message, leaves.map((other) => other.path))
          }`
        )
      })
    })
  )
}
