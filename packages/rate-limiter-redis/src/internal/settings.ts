/**
 * The Redis store's options: their validation (every error names the option and the value) and
 * their `Config`, which decodes through the same validation.
 *
 * @internal
 */
import * as RedisConnection from "@sluice/redis/RedisConnection"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as RedisRateLimiterStore from "../RedisRateLimiterStore.js"

/** @internal */
export const defaultPrefix = "sluice:rl:"
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
  readonly prefix: string
  readonly defaultPolicy: Policy
  readonly policies: ReadonlyMap<string, Policy>
  readonly clock: "server" | "client"
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

/**
 * The store's own options (the connection's are `RedisConnection`'s to check).
 *
 * @internal
 */
export const resolveStore = (options: RedisRateLimiterStore.StoreOptions): Either.Either<Resolved, string> => {
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
  const clock = options.clock ?? "server"
  if (clock !== "server" && clock !== "client") {
    return Either.left(`clock must be "server" or "client", got ${JSON.stringify(clock)}`)
  }
  return Either.right({ prefix, defaultPolicy: defaultPolicy.right, policies: byName, clock })
}

/**
 * The options of a store with a connection of its own: the store's, and the connection's.
 *
 * @internal
 */
export const resolve = (
  options: RedisRateLimiterStore.Options
): Either.Either<{ readonly store: Resolved; readonly connection: RedisConnection.FromUrl }, string> => {
  const connection: RedisConnection.FromUrl = {
    url: options.url,
    redis: options.redis,
    commandTimeout: options.commandTimeout,
    connectTimeout: options.connectTimeout
  }
  const checked = RedisConnection.check(connection)
  if (Either.isLeft(checked)) return Either.left(checked.left)
  return Either.map(resolveStore(options), (store) => ({ store, connection }))
}

/** @internal */
export const config: Config.Config<RedisRateLimiterStore.Options> = Config.all({
  // URL, COMMAND_TIMEOUT and CONNECT_TIMEOUT, each checked and named by the connection's Config
  connection: RedisConnection.config,
  prefix: Config.option(Config.string("PREFIX")),
  storeDown: Config.option(Config.literal("fail-closed", "fail-open", "local")("STORE_DOWN")),
  localShare: Config.option(Config.number("LOCAL_SHARE"))
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
    const options: RedisRateLimiterStore.Options = {
      ...input.connection,
      prefix: Option.getOrUndefined(input.prefix),
      storeDown: Option.getOrElse(input.storeDown, () => "fail-closed" as const),
      localShare: Option.getOrUndefined(input.localShare)
    }
    const resolved = resolve(options)
    return Either.isLeft(resolved)
      ? Either.left(ConfigError.InvalidData([], `invalid Redis rate limiter store settings: ${resolved.left}`))
      : Either.right(options)
  })
)
