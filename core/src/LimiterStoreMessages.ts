/**
 * The Redis rate limiter store's sentences and fixed settings on plain values: how a failed
 * command, a limiter failing closed, the degraded mode and its end, and an ignored observation
 * read, and the rules of its options. Both Effect lines' `RedisRateLimiterStore` take them from
 * here, so that the same failure prints the same bytes on Effect 3 and Effect 4.
 *
 * @since 0.1.0
 */
import { errorText } from "./LimiterCommands.js"

/**
 * Who the store's messages name.
 *
 * @since 0.1.0
 * @category messages
 */
export const who = "Redis rate limiter store"

/**
 * The key prefix when none is given.
 *
 * @since 0.1.0
 * @category settings
 */
export const defaultPrefix = "sluice:rl:"

/**
 * On the client clock (tests under `TestClock`) the deciding clock and Redis' expiry clock run at
 * different speeds, so a key's TTL gets a minute more than any contract test lasts: it must not
 * expire in real time while the virtual clock still needs it.
 *
 * @since 0.1.0
 * @category settings
 */
export const clientClockTtlPadMillis = 60_000

/**
 * `Redis rate limiter store "sluice:rl:": reserve of "geo" failed: <cause>`.
 *
 * @since 0.1.0
 * @category messages
 */
export const commandFailed = (prefix: string, operation: string, key: string, cause: unknown): string =>
  `${who} "${prefix}": ${operation} of "${key}" failed: ${errorText(cause)}`

/**
 * A failed command's message, for a limiter whose store-down policy is `"fail-closed"`.
 *
 * @since 0.1.0
 * @category messages
 */
export const failsClosed = (message: string, key: string): string =>
  `${message} (limiter "${key}" fails closed while Redis is unreachable)`

/**
 * The warning logged once when the store loses Redis.
 *
 * @since 0.1.0
 * @category messages
 */
export const degraded = (prefix: string, cause: unknown): string =>
  `${who} "${prefix}" is degraded (${
    errorText(cause)
  }): each limiter applies its store-down policy until Redis answers again`

/**
 * The line logged when a command succeeds again after the store was degraded.
 *
 * @since 0.1.0
 * @category messages
 */
export const recovered = (prefix: string): string => `${who} "${prefix}" recovered: decisions are shared again`

/**
 * The warning for the observations a tighten cannot apply (`ignored`: `usableObservations`' sentence).
 *
 * @since 0.1.0
 * @category messages
 */
export const ignoredObservations = (prefix: string, ignored: string): string =>
  `${who} ${JSON.stringify(prefix)}: ${ignored}`

/**
 * The rule of `localShare` with `storeDown: "local"`.
 *
 * @since 0.1.0
 * @category rules
 */
export const localShareRequired =
  `is required with storeDown "local": the share of each quota one process may use alone`

/**
 * The rule of `storeDown` when `localShare` is set (`shown`: the value given, as the options show it).
 *
 * @since 0.1.0
 * @category rules
 */
export const localShareNeedsLocal = (shown: string | undefined): string =>
  `must be "local" when localShare is set, got ${shown ?? "nothing"}`

/**
 * The rule of `prefix`.
 *
 * @since 0.1.0
 * @category rules
 */
export const prefixRule = "a string without braces (they delimit the hash tag)"

/**
 * Whether `prefix` keeps the hash tag intact.
 *
 * @since 0.1.0
 * @category rules
 */
export const isPrefix = (prefix: string): boolean => !/[{}]/.test(prefix)

/**
 * What `Config` reads the store's options as.
 *
 * @since 0.1.0
 * @category rules
 */
export const configWhat = "a Redis rate limiter store"
