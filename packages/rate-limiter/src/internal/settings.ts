/**
 * A limiter's settings: their validation (every error a sentence naming the value) and their
 * `Config`, which decodes through the same validation.
 *
 * @internal
 */
import type { NonEmptyReadonlyArray } from "effect/Array"
import * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as RateLimiter from "../RateLimiter.js"
import type * as RateLimiterStore from "../RateLimiterStore.js"

const algorithms: ReadonlyArray<RateLimiterStore.Algorithm> = ["gcra", "fixed-window", "sliding-window"]

/** @internal */
export const show = (u: unknown): string => {
  if (typeof u === "string") return JSON.stringify(u)
  if (typeof u === "number" || typeof u === "bigint" || typeof u === "boolean" || u === undefined) return String(u)
  if (Duration.isDuration(u)) return Duration.format(u)
  try {
    return JSON.stringify(u) ?? String(u)
  } catch {
    return String(u)
  }
}

/** @internal */
export const isPositiveInteger = (u: unknown): u is number => typeof u === "number" && Number.isSafeInteger(u) && u >= 1

/** `Duration` reads `-5 seconds`, `-1` and `[-1, 0]` as zero: a minus sign is a mistake to name. */
const isNegative = (input: unknown): boolean =>
  ((typeof input === "number" || typeof input === "bigint") && input < 0) ||
  (typeof input === "string" && /^\s*-/.test(input)) ||
  (Array.isArray(input) && input.some((part) => (typeof part === "number" || typeof part === "bigint") && part < 0))

/** A duration from user input, or why it is not one. NaN and negatives are refused, not read as zero. */
export const decodeDuration = (
  label: string,
  input: unknown,
  options: { readonly allowZero: boolean; readonly allowInfinite: boolean }
): Either.Either<number, string> => {
  if (typeof input === "number" && Number.isNaN(input)) return Either.left(`${label} must be a duration, got NaN`)
  if (isNegative(input)) {
    return Either.left(`${label} must be ${options.allowZero ? "≥ 0" : "> 0"}, got ${show(input)}`)
  }
  const decoded = Duration.decodeUnknown(input)
  if (Option.isNone(decoded)) return Either.left(`${label} must be a duration, got ${show(input)}`)
  const millis = Duration.toMillis(decoded.value)
  if (Number.isNaN(millis)) return Either.left(`${label} must be a duration, got NaN`)
  if (millis < 0 || (millis === 0 && !options.allowZero)) {
    return Either.left(`${label} must be ${options.allowZero ? "≥ 0" : "> 0"}, got ${show(input)}`)
  }
  if (!Number.isFinite(millis) && !options.allowInfinite) return Either.left(`${label} must be finite, got infinity`)
  return Either.right(millis)
}

/** @internal */
export interface Resolved {
  readonly limits: NonEmptyReadonlyArray<RateLimiter.ResolvedLimit>
  readonly specs: ReadonlyArray<RateLimiterStore.LimitSpec>
  readonly maxWaitMillis: number
  /** The dimensions, each once, in the order of the limits. */
  readonly dimensions: NonEmptyReadonlyArray<string>
}

/** @internal */
export const defaultDimension = "default"

const resolveLimit = (input: RateLimiter.Limit, at: string): Either.Either<RateLimiter.ResolvedLimit, string> => {
  const dimension = input.dimension ?? defaultDimension
  if (typeof dimension !== "string" || dimension.length === 0) {
    return Either.left(`${at}dimension must be a non-empty string, got ${show(input.dimension)}`)
  }
  if (!isPositiveInteger(input.limit)) return Either.left(`${at}limit must be an integer ≥ 1, got ${show(input.limit)}`)
  const algorithm = input.algorithm ?? "gcra"
  if (!algorithms.includes(algorithm)) {
    return Either.left(`${at}algorithm must be one of ${algorithms.join(", ")}, got ${show(algorithm)}`)
  }
  const window = decodeDuration(`${at}window`, input.window, { allowZero: false, allowInfinite: false })
  if (Either.isLeft(window)) return Either.left(window.left)
  let burst = 1
  if (algorithm === "gcra") {
    if (input.burst !== undefined && !isPositiveInteger(input.burst)) {
      return Either.left(`${at}burst must be an integer ≥ 1, got ${show(input.burst)}`)
    }
    burst = input.burst ?? 1
  } else {
    if (input.burst !== undefined) {
      return Either.left(
        `${at}burst applies to gcra only; a ${algorithm} admits its whole limit at once (add a gcra limit to space starts)`
      )
    }
    burst = input.limit
  }
  return Either.right({ dimension, limit: input.limit, window: Duration.millis(window.right), algorithm, burst })
}

/**
 * Checks the settings of a limiter; the error is a sentence without the limiter's name.
 *
 * @internal
 */
export const resolve = (settings: RateLimiter.Settings): Either.Either<Resolved, string> => {
  const inputs: ReadonlyArray<RateLimiter.Limit> = settings.limits !== undefined ? settings.limits : [settings]
  if (settings.limits !== undefined && (settings.limit !== undefined || settings.window !== undefined)) {
    return Either.left("give either limit and window or limits, not both")
  }
  if (!Array.isArray(inputs) || inputs.length === 0) return Either.left("limits must hold at least one limit")
  const resolvedLimits: Array<RateLimiter.ResolvedLimit> = []
  for (let i = 0; i < inputs.length; i++) {
    const resolved = resolveLimit(inputs[i], inputs.length > 1 ? `limits[${i}].` : "")
    if (Either.isLeft(resolved)) return Either.left(resolved.left)
    resolvedLimits.push(resolved.right)
  }
  if (!Arr.isNonEmptyReadonlyArray(resolvedLimits)) return Either.left("limits must hold at least one limit")
  const limits = resolvedLimits
  let maxWaitMillis = Number.POSITIVE_INFINITY
  if (settings.maxWait !== undefined) {
    const decoded = decodeDuration("maxWait", settings.maxWait, { allowZero: true, allowInfinite: true })
    if (Either.isLeft(decoded)) return Either.left(decoded.left)
    maxWaitMillis = decoded.right
  }
  const specs = limits.map((limit): RateLimiterStore.LimitSpec => ({
    algorithm: limit.algorithm,
    limit: limit.limit,
    windowMillis: Duration.toMillis(limit.window),
    burst: limit.burst
  }))
  const dimensions = Arr.dedupe(Arr.map(limits, (limit) => limit.dimension))
  return Either.right({ limits, specs, maxWaitMillis, dimensions })
}

/** @internal */
export const illegal = (name: string, message: string) =>
  Effect.die(new Cause.IllegalArgumentException(`rate limiter ${show(name)}: ${message}`))

/** A duration key read as text and decoded here, so that a negative or malformed value is named. */
const durationConfig = (
  key: string,
  options: { readonly allowZero: boolean; readonly allowInfinite: boolean }
): Config.Config<Duration.Duration> =>
  Config.mapOrFail(Config.string(key), (text) =>
    Either.mapBoth(decodeDuration(key, text, options), {
      onLeft: (message) => ConfigError.InvalidData([], message),
      onRight: (millis) => Duration.millis(millis)
    }))

const configKeys = { limit: "LIMIT", window: "WINDOW", burst: "BURST", algorithm: "ALGORITHM", maxWait: "MAX_WAIT" }

/**
 * A section that is wholly absent is missing (so `Config.option` reads it as "not configured");
 * one that is partly present must be whole: a missing `LIMIT` or `WINDOW` is then an error naming
 * it, never a silently dropped bound.
 *
 * @internal
 */
export const config: Config.Config<RateLimiter.Settings> = Config.all({
  limit: Config.option(Config.integer(configKeys.limit)),
  window: Config.option(durationConfig(configKeys.window, { allowZero: false, allowInfinite: false })),
  burst: Config.option(Config.integer(configKeys.burst)),
  algorithm: Config.option(Config.literal("gcra", "fixed-window", "sliding-window")(configKeys.algorithm)),
  maxWait: Config.option(durationConfig(configKeys.maxWait, { allowZero: true, allowInfinite: true }))
}).pipe(
  Config.mapOrFail((input) => {
    const read: ReadonlyArray<readonly [Option.Option<unknown>, string]> = [
      [input.limit, configKeys.limit],
      [input.window, configKeys.window],
      [input.burst, configKeys.burst],
      [input.algorithm, configKeys.algorithm],
      [input.maxWait, configKeys.maxWait]
    ]
    const present = read.filter(([value]) => Option.isSome(value)).map(([, key]) => key)
    if (present.length === 0) {
      return Either.left(
        ConfigError.MissingData([], `no rate limit configured (${configKeys.limit} and ${configKeys.window})`)
      )
    }
    const { algorithm, burst, limit, maxWait, window } = input
    if (Option.isNone(limit) || Option.isNone(window)) {
      const missing = Option.isNone(limit) ? configKeys.limit : configKeys.window
      return Either.left(
        ConfigError.InvalidData(
          [missing],
          `missing, and required since ${present.join(", ")} ${
            present.length === 1 ? "is" : "are"
          } set: a rate limit needs both ${configKeys.limit} and ${configKeys.window}`
        )
      )
    }
    const settings: RateLimiter.Settings = {
      limit: limit.value,
      window: window.value,
      algorithm: Option.getOrElse(algorithm, () => "gcra" as const),
      burst: Option.getOrUndefined(burst),
      maxWait: Option.getOrUndefined(maxWait)
    }
    const resolved = resolve(settings)
    return Either.isLeft(resolved)
      ? Either.left(ConfigError.InvalidData([], `invalid rate limiter settings: ${resolved.left}`))
      : Either.right(settings)
  })
)
