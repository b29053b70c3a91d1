/**
 * The distributed bulkhead's options, decoded once: `make` turns a bad value into a defect naming
 * the option and the value, `config` into invalid data with the same message.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as Api from "../RedisBulkhead.js"

const defaultPrefix = "sluice:bh:"
const defaultLeaseTtlMillis = 10_000
/** Three renewals per TTL leave two chances for a late one; below 300 ms a busy event loop loses leases. */
const minLeaseTtlMillis = 300

/** @internal */
export interface Settings {
  readonly name: string
  readonly permits: number
  readonly maxPermits: number
  readonly maxWaiting: number
  readonly maxWait: Duration.Duration
  readonly leaseTtlMillis: number
  readonly onLeaseLost: Api.OnLeaseLost
  readonly storeDown: Api.StoreDownPolicy
  /** With `"local"`: the share of K this process may hold alone while Redis is down; 1 with `"fail-open"`. */
  readonly localShare: number
  readonly prefix: string
}

/** @internal */
export const isPositiveInteger = (n: unknown): n is number => typeof n === "number" && Number.isSafeInteger(n) && n >= 1

/** @internal */
export const illegal = (message: string) => new Cause.IllegalArgumentException(message)

/** @internal */
export const decodeDuration = (
  name: string,
  what: string,
  input: Duration.DurationInput | undefined
): Duration.Duration | undefined => {
  if (input === undefined) return undefined
  const negative = (typeof input === "number" && !(input >= 0)) ||
    (typeof input === "bigint" && input < BigInt(0)) ||
    (typeof input === "string" && input.trim().startsWith("-"))
  const decoded = negative ? undefined : Option.getOrUndefined(Duration.decodeUnknown(input))
  if (decoded === undefined) {
    throw illegal(`bulkhead "${name}": ${what} must be a duration ≥ 0, got ${JSON.stringify(String(input))}`)
  }
  return decoded
}

/** @internal */
export const resolve = (options: Api.Options): Settings => {
  const name = options.name
  if (typeof name !== "string" || name.length === 0 || /[{}]/.test(name)) {
    throw illegal(`a Redis bulkhead needs a non-empty name without braces, got ${JSON.stringify(name)}`)
  }
  if (!isPositiveInteger(options.permits)) {
    throw illegal(`bulkhead "${name}": permits must be an integer ≥ 1, got ${options.permits}`)
  }
  const maxPermits = options.maxPermits ?? options.permits
  if (!isPositiveInteger(maxPermits) || maxPermits < options.permits) {
    throw illegal(
      `bulkhead "${name}": maxPermits must be an integer ≥ permits (${options.permits}), got ${options.maxPermits}`
    )
  }
  const maxWaiting = options.maxWaiting ?? Infinity
  if (!(maxWaiting === Infinity || (Number.isSafeInteger(maxWaiting) && maxWaiting >= 0))) {
    throw illegal(`bulkhead "${name}": maxWaiting must be an integer ≥ 0 or Infinity, got ${options.maxWaiting}`)
  }
  const maxWait = decodeDuration(name, "maxWait", options.maxWait) ?? Duration.infinity
  const ttl = decodeDuration(name, "leaseTtl", options.leaseTtl)
  const leaseTtlMillis = ttl === undefined ? defaultLeaseTtlMillis : Duration.toMillis(ttl)
  if (!(Number.isFinite(leaseTtlMillis) && leaseTtlMillis >= minLeaseTtlMillis)) {
    throw illegal(
      `bulkhead "${name}": leaseTtl must be a finite duration ≥ ${minLeaseTtlMillis}ms, got ${String(options.leaseTtl)}`
    )
  }
  const onLeaseLost = options.onLeaseLost ?? "log"
  if (onLeaseLost !== "log" && onLeaseLost !== "interrupt") {
    throw illegal(`bulkhead "${name}": onLeaseLost must be "log" or "interrupt", got ${JSON.stringify(onLeaseLost)}`)
  }
  const storeDown = options.storeDown ?? "fail-closed"
  if (storeDown !== "fail-closed" && storeDown !== "fail-open" && storeDown !== "local") {
    throw illegal(
      `bulkhead "${name}": storeDown must be "fail-closed", "fail-open" or "local", got ${JSON.stringify(storeDown)}`
    )
  }
  const localShare = options.localShare
  if (storeDown === "local" && !(typeof localShare === "number" && localShare > 0 && localShare <= 1)) {
    throw illegal(
      `bulkhead "${name}": storeDown "local" needs localShare, the share of K (${options.permits}) one process may ` +
        `hold alone while Redis is down, in (0, 1] (1 / the number of processes), got ${localShare}`
    )
  }
  if (storeDown !== "local" && localShare !== undefined) {
    throw illegal(`bulkhead "${name}": localShare applies to storeDown "local" only, got storeDown ${storeDown}`)
  }
  const prefix = options.prefix ?? defaultPrefix
  if (typeof prefix !== "string" || /[{}]/.test(prefix)) {
    throw illegal(`bulkhead "${name}": prefix must be a string without braces, got ${JSON.stringify(prefix)}`)
  }
  return {
    name,
    permits: options.permits,
    maxPermits,
    maxWaiting,
    maxWait,
    leaseTtlMillis: Math.round(leaseTtlMillis),
    onLeaseLost,
    storeDown,
    localShare: storeDown === "local" && localShare !== undefined ? localShare : 1,
    prefix
  }
}

/**
 * The permits of the local fallback for a fleet of `permits`: `⌊K × share⌋`, at least 1 (a share
 * rounding to zero would stop the process altogether).
 *
 * @internal
 */
export const fallbackPermits = (settings: Settings, permits: number): number =>
  Math.max(1, Math.floor(permits * settings.localShare + 1e-9))

const optional = <A>(config: Config.Config<A>): Config.Config<A | undefined> =>
  Config.map(Config.option(config), Option.getOrUndefined)

/** @internal */
export const config: Config.Config<Omit<Api.Options, "name">> = Config.all({
  permits: Config.integer("PERMITS"),
  maxPermits: optional(Config.integer("MAX_PERMITS")),
  maxWaiting: optional(Config.integer("MAX_WAITING")),
  maxWait: optional(Config.duration("MAX_WAIT")),
  leaseTtl: optional(Config.duration("LEASE_TTL")),
  onLeaseLost: optional(Config.literal("log", "interrupt")("ON_LEASE_LOST")),
  storeDown: optional(Config.literal("fail-closed", "fail-open", "local")("STORE_DOWN")),
  localShare: optional(Config.number("LOCAL_SHARE")),
  prefix: optional(Config.string("PREFIX"))
}).pipe(
  // the same checks as `make`, as invalid data rather than a defect
  Config.mapOrFail((options) => {
    try {
      resolve({ ...options, name: "config" })
      return Either.right(options)
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      return Either.left(ConfigError.InvalidData([], message.replace(/^bulkhead "config": /, "")))
    }
  })
)
