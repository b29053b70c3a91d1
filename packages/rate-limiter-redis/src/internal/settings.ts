/**
 * The Redis store's options: their validation (every error names the option and the value) and
 * their `Config`, which decodes through the same validation.
 *
 * @internal
 */
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as RedisRateLimiterStore from "../RedisRateLimiterStore.js"

/** @internal */
export const defaultUrl = "redis://127.0.0.1:6379"
/** @internal */
export const defaultPrefix = "sluice:rl:"
/**
 * A take waits at most this long for Redis before the store-down policy answers instead.
 *
 * @internal
 */
export const defaultCommandTimeoutMillis = 500
/** @internal */
export const defaultConnectTimeoutMillis = 2000
/**
 * Reconnection backoff: 100 ms more per attempt, capped so that recovery is noticed within 1 s.
 *
 * @internal
 */
export const maxReconnectDelayMillis = 1000
/**
 * On the client clock (tests under `TestClock`) the deciding clock and Redis' expiry clock run at
 * different speeds: virtual time jumps while real time crawls, and the other way round. A key
 * must not expire in real time while the virtual clock still needs it, so its TTL gets a minute
 * more than any contract test lasts.
 *
 * @internal
 */
export const clientClockTtlPadMillis = 60_000

/** @internal */
export interface Policy {
  readonly storeDown: RedisRateLimiterStore.StoreDownPolicy
  readonly localShare: number
}

/** @internal */
export interface Resolved {
  readonly url: string
  readonly prefix: string
  readonly defaultPolicy: Policy
  readonly policies: ReadonlyMap<string, Policy>
  readonly commandTimeoutMillis: number
  readonly connectTimeoutMillis: number
  readonly clock: "server" | "client"
  readonly redis: RedisRateLimiterStore.Options["redis"]
}

/** @internal */
export const policies: ReadonlyArray<RedisRateLimiterStore.StoreDownPolicy> = ["fail-closed", "fail-open", "local"]

/** @internal */
export const resolvePolicy = (
  at: string,
  storeDown: unknown,
  localShare: unknown
): Either.Either<Policy, string> => {
  const policy = storeDown ?? "fail-closed"
  if (typeof policy !== "string" || !policies.some((p) => p === policy)) {
    return Either.left(`${at}storeDown must be one of ${policies.join(", ")}, got ${JSON.stringify(policy)}`)
  }
  const known = policy as RedisRateLimiterStore.StoreDownPolicy
  if (localShare !== undefined && (typeof localShare !== "number" || !(localShare > 0 && localShare <= 1))) {
    return Either.left(`${at}localShare must be a number in (0, 1], got ${String(localShare)}`)
  }
  if (known === "local" && localShare === undefined) {
    return Either.left(
      `${at}localShare is required with storeDown "local": the share of each quota one process may use alone`
    )
  }
  return Either.right({ storeDown: known, localShare: typeof localShare === "number" ? localShare : 1 })
}

/** @internal */
export const showInput = (input: unknown): string =>
  typeof input === "string"
    ? JSON.stringify(input)
    : Duration.isDuration(input)
    ? Duration.format(input)
    : String(input)

/**
 * `Duration` reads `-5 seconds` and `-1` as zero: a minus sign is a mistake to name.
 *
 * @internal
 */
export const isNegative = (input: unknown): boolean =>
  ((typeof input === "number" || typeof input === "bigint") && input < 0) ||
  (typeof input === "string" && /^\s*-/.test(input)) ||
  (Array.isArray(input) && input.some((part) => (typeof part === "number" || typeof part === "bigint") && part < 0))

/** @internal */
export const decodeMillis = (label: string, input: unknown, fallback: number): Either.Either<number, string> => {
  if (input === undefined) return Either.right(fallback)
  const refused = Either.left(`${label} must be a finite duration > 0, got ${showInput(input)}`)
  if (isNegative(input)) return refused
  const decoded = Duration.decodeUnknown(input)
  if (Option.isNone(decoded)) return Either.left(`${label} must be a duration, got ${showInput(input)}`)
  const millis = Duration.toMillis(decoded.value)
  return millis > 0 && Number.isFinite(millis) ? Either.right(millis) : refused
}

/**
 * A Redis URL, or why not (a URL given as `Redacted` is never printed).
 *
 * @internal
 */
export const checkUrl = (url: string, redacted: boolean): Either.Either<string, string> => {
  const shown = redacted ? "(redacted)" : JSON.stringify(url)
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return Either.left(`url must be a URL such as redis://host:6379, got ${shown}`)
  }
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") {
    if (parsed.password !== "") parsed.password = "***"
    return Either.left(`url must use redis:// or rediss://, got ${redacted ? shown : JSON.stringify(parsed.href)}`)
  }
  return Either.right(url)
}

/** @internal */
export const resolve = (options: RedisRateLimiterStore.Options): Either.Either<Resolved, string> => {
  const url = options.url === undefined
    ? defaultUrl
    : Redacted.isRedacted(options.url)
    ? Redacted.value(options.url)
    : options.url
  if (typeof url !== "string" || url.length === 0) return Either.left("url must be a non-empty string")
  const checkedUrl = checkUrl(url, Redacted.isRedacted(options.url))
  if (Either.isLeft(checkedUrl)) return Either.left(checkedUrl.left)
  const prefix = options.prefix ?? defaultPrefix
  if (typeof prefix !== "string" || /[{}]/.test(prefix)) {
    return Either.left(`prefix must be a string without braces (they delimit the hash tag), got ${String(prefix)}`)
  }
  const defaultPolicy = resolvePolicy("", options.storeDown, options.localShare)
  if (Either.isLeft(defaultPolicy)) return Either.left(defaultPolicy.left)
  const byName = new Map<string, Policy>()
  for (const [name, policy] of Object.entries(options.limiters ?? {})) {
    const resolved = resolvePolicy(`limiters[${JSON.stringify(name)}].`, policy.storeDown, policy.localShare)
    if (Either.isLeft(resolved)) return Either.left(resolved.left)
    byName.set(name, resolved.right)
  }
  const commandTimeout = decodeMillis("commandTimeout", options.commandTimeout, defaultCommandTimeoutMillis)
  if (Either.isLeft(commandTimeout)) return Either.left(commandTimeout.left)
  const connectTimeout = decodeMillis("connectTimeout", options.connectTimeout, defaultConnectTimeoutMillis)
  if (Either.isLeft(connectTimeout)) return Either.left(connectTimeout.left)
  const clock = options.clock ?? "server"
  if (clock !== "server" && clock !== "client") {
    return Either.left(`clock must be "server" or "client", got ${JSON.stringify(clock)}`)
  }
  return Either.right({
    url,
    prefix,
    defaultPolicy: defaultPolicy.right,
    policies: byName,
    commandTimeoutMillis: commandTimeout.right,
    connectTimeoutMillis: connectTimeout.right,
    clock,
    redis: options.redis
  })
}

/** @internal */
export const config: Config.Config<RedisRateLimiterStore.Options> = Config.all({
  url: Config.option(Config.redacted("URL")),
  prefix: Config.option(Config.string("PREFIX")),
  storeDown: Config.option(Config.literal("fail-closed", "fail-open", "local")("STORE_DOWN")),
  localShare: Config.option(Config.number("LOCAL_SHARE")),
  // read as text: `Config.duration` reads "-5 seconds" as zero
  commandTimeout: Config.option(Config.string("COMMAND_TIMEOUT"))
}).pipe(
  Config.mapOrFail((input) => {
    // LOCAL_SHARE means something only with STORE_DOWN=local: alone, the policy key is missing
    // or misspelt, and the fallback it meant would silently be fail-closed
    if (Option.isSome(input.localShare) && Option.getOrUndefined(input.storeDown) !== "local") {
      return Either.left(
        ConfigError.InvalidData(
          ["STORE_DOWN"],
          `must be "local" when LOCAL_SHARE is set, got ${
            Option.match(input.storeDown, { onNone: () => "nothing", onSome: (policy) => JSON.stringify(policy) })
          }`
        )
      )
    }
    const commandTimeout = Option.match(input.commandTimeout, {
      onNone: () => Either.right(undefined),
      onSome: (text) => Either.map(decodeMillis("COMMAND_TIMEOUT", text, 0), Duration.millis)
    })
    if (Either.isLeft(commandTimeout)) {
      return Either.left(ConfigError.InvalidData(["COMMAND_TIMEOUT"], commandTimeout.left))
    }
    const options: RedisRateLimiterStore.Options = {
      url: Option.getOrUndefined(input.url),
      prefix: Option.getOrUndefined(input.prefix),
      storeDown: Option.getOrElse(input.storeDown, () => "fail-closed" as const),
      localShare: Option.getOrUndefined(input.localShare),
      commandTimeout: commandTimeout.right
    }
    const resolved = resolve(options)
    return Either.isLeft(resolved)
      ? Either.left(ConfigError.InvalidData([], `invalid Redis rate limiter store settings: ${resolved.left}`))
      : Either.right(options)
  })
)
