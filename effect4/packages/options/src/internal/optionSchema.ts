/** @internal */
import { OptionMessages } from "@sluice/core"
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import * as SchemaGetter from "effect/SchemaGetter"
import * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaTransformation from "effect/SchemaTransformation"
import type * as Api from "../OptionSchema.js"

/** @internal */
export const RuleKey = "@sluice/options/Rule"

/** Durations by the core's format, so that both Effect lines print them alike. */
const showDuration = (u: unknown): string | undefined => {
  if (!Duration.isDuration(u)) return undefined
  const shown = OptionMessages.formatDuration(Option.getOrUndefined(Duration.toNanos(u)))
  // Effect 4 has a negative infinity, which Effect 3 cannot construct
  return !Duration.isFinite(u) && Duration.isLessThan(u, Duration.zero) ? `-${shown}` : shown
}

/** @internal */
export const show = (u: unknown): string => OptionMessages.show(u, showDuration)

/** @internal */
export const owner = (kind: string, name: unknown): string => OptionMessages.owner(kind, name)

/** @internal */
export const refusal = (rule: Api.Rule, actual: unknown, shown = show(actual)): string =>
  OptionMessages.refusal(rule, actual, shown)

const asRule = (u: unknown): Api.Rule | undefined => Predicate.isObject(u) ? u as unknown as Api.Rule : undefined

/** The rule of a node: Effect keeps a schema's annotations on its last check, if it has checks. */
const ruleAt = (ast: AST.AST): Api.Rule | undefined =>
  asRule(ast.annotations?.[RuleKey]) ??
    ast.checks?.map((check) => asRule(check.annotations?.[RuleKey])).find((rule) => rule !== undefined)

/** A rule of the schema or, for an optional field (`S | undefined`), of a member. */
const ruleOf = (ast: AST.AST): Api.Rule | undefined =>
  ruleAt(ast) ?? (AST.isUnion(ast) ? ast.types.map(ruleOf).find((rule) => rule !== undefined) : undefined)

/** @internal */
export const make = <A, I>(schema: Schema.Codec<A, I>, rule: Api.Rule): Schema.Codec<A, I> =>
  schema.annotate({ [RuleKey]: rule })

const identity = (text: string): unknown => text

/** @internal */
export const integer = (options: { readonly min: number; readonly infinite?: boolean }): Schema.Codec<number> =>
  make(
    Schema.Number.check(
      Schema.makeFilter((n) =>
        (Number.isSafeInteger(n) && n >= options.min) || (options.infinite === true && n === Infinity)
      )
    ),
    { ...OptionMessages.integerRule(options), fromText: OptionMessages.numberFromText }
  )

/** @internal */
export const number = (
  options: { readonly min?: number; readonly greaterThan?: number; readonly max?: number }
): Schema.Codec<number> =>
  make(Schema.Number.check(Schema.makeFilter((n) => OptionMessages.isWithin(options, n))), {
    ...OptionMessages.numberRule(options),
    fromText: OptionMessages.numberFromText
  })

const isDurationInput = (u: unknown): u is Duration.Input =>
  Duration.isDuration(u) || typeof u === "number" || typeof u === "bigint" || typeof u === "string" ||
  (Array.isArray(u) && u.length === 2 && u.every((part) => typeof part === "number"))

const DurationInput = Schema.declare(isDurationInput)

/** @internal */
export const duration = (
  options: { readonly zero: boolean; readonly infinite: boolean }
): Schema.Codec<Duration.Duration, Duration.Input> =>
  make(
    DurationInput.pipe(Schema.decodeTo(
      Schema.Duration,
      new SchemaTransformation.Transformation(
        SchemaGetter.transformEffect<Duration.Duration, Duration.Input>((input, parseOptions) => {
          // Effect 4 reads `-5` as a negative duration and NaN as zero: both are refused here
          const decoded = OptionMessages.isNegativeInput(input) ? Option.none() : Duration.fromInput(input)
          return Option.isSome(decoded) && !Duration.isLessThan(decoded.value, Duration.zero) &&
              (options.zero || Duration.isGreaterThan(decoded.value, Duration.zero)) &&
              (options.infinite || Duration.isFinite(decoded.value))
            ? Effect.succeed(decoded.value)
            : Effect.fail(new SchemaIssue.InvalidValue(undefined, input, parseOptions))
        }),
        SchemaGetter.passthroughSubtype<Duration.Input, Duration.Duration>()
      )
    )),
    { ...OptionMessages.durationRule(options), fromText: OptionMessages.durationFromText }
  )

/** @internal */
export const literal = <const L extends readonly [string, ...Array<string>]>(
  ...values: L
): Schema.Codec<L[number]> =>
  make(Schema.Literals(values), { ...OptionMessages.literalRule(values), fromText: identity })

/** @internal */
export const boolean: Schema.Codec<boolean> = make(Schema.Boolean, {
  ...OptionMessages.booleanRule,
  fromText: OptionMessages.booleanFromText
})

/** @internal */
export const string: Schema.Codec<string> = make(Schema.String, { ...OptionMessages.stringRule, fromText: identity })

interface Refused {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

const standard = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * The first refusal. The outermost node with a rule speaks for its whole value, whatever failed
 * inside it (a value of the wrong type gets the same sentence as one out of range); a value
 * without a rule gets Effect's own message.
 */
const firstRefusal = (
  issue: SchemaIssue.Issue,
  path: ReadonlyArray<PropertyKey>,
  given: ReadonlyArray<string>,
  rule?: Api.Rule
): Refused => {
  if (issue._tag === "Pointer") return firstRefusal(issue.issue, [...path, ...issue.path], given)
  if (issue._tag === "MissingKey") return { path, message: "is missing" }
  if (issue._tag === "UnexpectedKey") {
    // the sentence names the key at its path, so the refusal has no path of its own
    const known = [
      ...(AST.isObjects(issue.ast) ? issue.ast.propertySignatures.map((property) => String(property.name)) : []),
      ...OptionMessages.givenAt(given, path.slice(0, -1))
    ]
    return { path: [], message: OptionMessages.unknownOption(path, known) }
  }
  const own = rule ?? ("ast" in issue ? ruleOf(issue.ast) : undefined)
  if (own !== undefined && SchemaIssue.hasInput(issue)) return { path, message: refusal(own, issue.input) }
  if (issue._tag === "Filter" || issue._tag === "Encoding") return firstRefusal(issue.issue, path, given, own)
  if ((issue._tag === "Composite" || issue._tag === "AnyOf") && issue.issues.length > 0) {
    return firstRefusal(issue.issues[0], path, given, own)
  }
  const [first] = standard(issue).issues
  const at = (first?.path ?? []).map((key): PropertyKey => typeof key === "object" ? key.key : key)
  return { path: [...path, ...at], message: first?.message ?? "is invalid" }
}

const decodeFirst = <A, I>(schema: Schema.Codec<A, I>, given: ReadonlyArray<string> = []) => {
  const decode = Schema.decodeUnknownResult(schema)
  return (input: unknown): Result.Result<A, Refused> =>
    Result.mapError(
      // a key the options do not have is refused: a misspelled option ignored would drop its bound
      decode(OptionMessages.withoutGiven(input, given), {
        reportInput: true,
        errors: "first",
        onExcessProperty: "error"
      }),
      (error) => firstRefusal(error.issue, [], given)
    )
}

/** @internal */
export const decodeResult = <A, I>(
  schema: Schema.Codec<A, I>,
  who: string,
  given: ReadonlyArray<string> = []
): (input: unknown) => Result.Result<A, string> => {
  const decode = decodeFirst(schema, given)
  return (input) =>
    Result.mapError(
      decode(input),
      (refused) =>
        `${who}: ${refused.path.length === 0 ? "" : `${OptionMessages.formatPath(refused.path)} `}${refused.message}`
    )
}

/** @internal */
export const decodeOption = <A, I>(
  schema: Schema.Codec<A, I>,
  option: string
): (input: unknown) => Result.Result<A, string> => {
  const decode = decodeFirst(schema)
  return (input) => Result.mapError(decode(input), (refused) => `${option} ${refused.message}`)
}

/** @internal */
export const decodeSync = <A, I>(
  schema: Schema.Codec<A, I>,
  who: string,
  given: ReadonlyArray<string> = []
): (input: unknown) => A => {
  const decode = decodeResult(schema, who, given)
  return (input) => Result.getOrThrowWith(decode(input), (message) => new Cause.IllegalArgumentError(message))
}

const requireRule = (ast: AST.AST, key: string): Api.Rule => {
  const rule = ruleOf(ast)
  if (rule === undefined) throw new Cause.IllegalArgumentError(OptionMessages.notAnOption(key))
  return rule
}

/** A refusal of Config text, at its key: Config.schema adds the path above it. */
const refusedAt = (key: string, text: string, message: string, parseOptions: AST.ParseOptions): SchemaIssue.Issue =>
  new SchemaIssue.Pointer([key], new SchemaIssue.InvalidValue({ message }, text, parseOptions))

/** Config text, of the shape `from`, decoded by `decode` into `to`'s values; never encoded back. */
const textCodec = <A, E>(
  from: Schema.Codec<E>,
  to: Schema.Codec<A>,
  decode: (input: E, parseOptions: AST.ParseOptions) => Effect.Effect<A, SchemaIssue.Issue>
): Schema.Codec<A, E> =>
  from.pipe(Schema.decodeTo(
    to,
    new SchemaTransformation.Transformation(
      SchemaGetter.transformEffect<A, E>(decode),
      SchemaGetter.forbidden(() => "an option read from Config is not written back")
    )
  ))

/** @internal */
export const configKey = <A, I>(schema: Schema.Codec<A, I>, key: string): Config.Config<A> => {
  const rule = requireRule(schema.ast, key)
  const decode = decodeFirst(schema)
  return Config.schema(
    textCodec(Schema.String, Schema.toType(schema), (text, parseOptions) => {
      const value = rule.fromText(text)
      return Result.match(decode(value), {
        onSuccess: Effect.succeed,
        onFailure: () =>
          Effect.fail(
            new SchemaIssue.InvalidValue({ message: `${key} ${refusal(rule, value, show(text))}` }, text, parseOptions)
          )
      })
    }),
    key
  )
}

interface Leaf {
  readonly path: ReadonlyArray<string>
  readonly key: string
  readonly required: boolean
  readonly rule: Api.Rule
}

/** The options' leaves, nested records flattened (`retryAfter: { min }` is the key `RETRY_AFTER_MIN`). */
const leavesOf = (ast: AST.AST, at: ReadonlyArray<string>, required: boolean): ReadonlyArray<Leaf> => {
  if (!AST.isObjects(ast)) throw new Cause.IllegalArgumentError(OptionMessages.notAnOption(OptionMessages.keyOf(at)))
  return ast.propertySignatures.flatMap((property) => {
    const path = [...at, String(property.name)]
    const isRequired = required && !AST.isOptional(property.type)
    const rule = ruleOf(property.type)
    if (rule !== undefined) return [{ path, key: OptionMessages.keyOf(path), required: isRequired, rule }]
    const record = AST.isUnion(property.type) ? property.type.types.find(AST.isObjects) : property.type
    return leavesOf(record ?? property.type, path, isRequired)
  })
}

const setIn = (target: Record<string, unknown>, path: ReadonlyArray<string>, value: unknown): void => {
  const [head, ...rest] = path
  if (rest.length === 0) {
    target[head] = value
    return
  }
  const existing = target[head]
  const child = typeof existing === "object" && existing !== null ? existing as Record<string, unknown> : {}
  target[head] = child
  setIn(child, rest, value)
}

/** @internal */
export const config = <A, I>(schema: Schema.Codec<A, I>, what: string): Config.Config<A> => {
  const leaves = leavesOf(schema.ast, [], true)
  const decode = decodeFirst(schema)
  const Texts = Schema.Struct(Object.fromEntries(leaves.map((leaf) => [leaf.key, Schema.optionalKey(Schema.String)])))
  return Config.schema(
    textCodec(
      // undefined: no section at all, which is still refused with a message naming the key
      Schema.UndefinedOr(Texts) as unknown as Schema.Codec<Record<string, string | undefined> | undefined>,
      Schema.toType(schema),
      (section, parseOptions) => {
        const texts = section ?? {}
        const present = leaves.filter((leaf) => texts[leaf.key] !== undefined)
        const missing = leaves.find((leaf) => leaf.required && !present.includes(leaf))
        if (missing !== undefined) {
          // a wholly absent section has no input under its path, which Config reads as absent
          // (`Config.option` gives none); a section set in part is a mistake, never a bound
          // silently dropped
          const set = present.map((leaf) => leaf.key)
          return Effect.fail(
            new SchemaIssue.Pointer(
              [missing.key],
              new SchemaIssue.InvalidValue({
                message: set.length === 0
                  ? OptionMessages.missingSection(missing.key, what)
                  : OptionMessages.partialSection(missing.key, set, what)
              })
            )
          )
        }
        const raw: Record<string, unknown> = {}
        for (const leaf of present) setIn(raw, leaf.path, leaf.rule.fromText(texts[leaf.key] ?? ""))
        return Result.match(decode(raw), {
          onSuccess: Effect.succeed,
          onFailure: (refused) => {
            const at = refused.path.map(String).join(".")
            const leaf = leaves.find((leaf) => leaf.path.join(".") === at)
            if (leaf === undefined) {
              return Effect.fail(
                new SchemaIssue.InvalidValue({
                  message: `${OptionMessages.formatPath(refused.path)} ${refused.message}`
                })
              )
            }
            const text = texts[leaf.key] ?? ""
            const value = leaf.rule.fromText(text)
            // the key's own rule, shown with the text as written; a rule across keys keeps its
            // sentence, with the options it names written as their keys
            const message = refused.message === refusal(leaf.rule, value)
              ? refusal(leaf.rule, value, show(text))
              : OptionMessages.withKeys(refused.message, leaves.map((other) => other.path))
            return Effect.fail(refusedAt(leaf.key, text, `${leaf.key} ${message}`, parseOptions))
          }
        })
      }
    )
  )
}
