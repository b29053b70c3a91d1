/**
 * The distributed bulkhead's options, declared once as a schema: the local bulkhead's limits
 * (permits, maxPermits, maxWaiting, maxWait) with the Redis ones on `@sluice/options`. `make` turns
 * a bad value into a defect naming the bulkhead, the option and the value; `config` reads the same
 * schema, so options and Config can never disagree. Defaults, bounds and texts are core's.
 *
 * @internal
 */
import { BulkheadLanes } from "@sluice/bulkhead"
import * as M from "@sluice/core/FleetMessages"
import { policyText } from "@sluice/core/FleetScripts"
import * as Ticket from "@sluice/core/FleetTicket"
import { OptionSchema } from "@sluice/options"
import * as Cause from "effect/Cause"
import type * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Api from "../RedisBulkhead.js"

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
  /** The lane policy, when the bulkhead has one: decoded as the local bulkhead's, and as the scripts take it. */
  readonly lanes: LaneSettings | undefined
}

/** @internal */
export interface LaneSettings extends BulkheadLanes.Decoded {
  /** The policy's text (`FleetScripts.policyText`), sent to every script and compared with the name's. */
  readonly text: string
  readonly fair: boolean
}

/** @internal */
export const isPositiveInteger = Ticket.isPositiveInteger

/** @internal */
export const illegal = (message: string) => new Cause.IllegalArgumentError(message)

const MaxWait = OptionSchema.duration({ zero: true, infinite: true })

/**
 * A call's own `maxWait` (undefined when it gives none); a bad one throws the defect.
 *
 * @internal
 */
export const decodeDuration = (
  name: string,
  what: string,
  input: Duration.Input | undefined
): Duration.Duration | undefined => {
  if (input === undefined) return undefined
  const decoded = OptionSchema.decodeOption(MaxWait, what)(input)
  if (Result.isFailure(decoded)) throw illegal(`${OptionSchema.owner("bulkhead", name)}: ${decoded.failure}`)
  return decoded.success
}

const NoBraces = OptionSchema.make(Schema.String.check(Schema.makeFilter(M.hasNoBraces)), {
  // a brace would end the hash tag that keeps a bulkhead's keys in one cluster slot
  rule: M.noBracesRule,
  fromText: (text) => text
})

// the rule goes on the duration before the bound is checked: a refusal then names the bound's rule
const LeaseTtl = OptionSchema.make(
  OptionSchema.duration({ zero: false, infinite: false }),
  { rule: M.leaseTtlRule, fromText: (text) => text.trim() }
).check(Schema.makeFilter((ttl: Duration.Duration) => Ticket.isLeaseTtl(Duration.toMillis(ttl))))

/** @internal */
export const Options = Schema.Struct({
  // the local bulkhead's limits (`Bulkhead.LimitsSchema`), whose fields its codec does not expose
  permits: OptionSchema.integer({ min: 1 }),
  maxPermits: Schema.optional(OptionSchema.integer({ min: 1 })),
  maxWaiting: Schema.optional(OptionSchema.integer({ min: 0, infinite: true })),
  maxWait: Schema.optional(MaxWait),
  leaseTtl: Schema.optional(LeaseTtl),
  onLeaseLost: Schema.optional(OptionSchema.literal("log", "interrupt")),
  storeDown: Schema.optional(OptionSchema.literal("fail-closed", "fail-open", "local")),
  localShare: Schema.optional(OptionSchema.number({ greaterThan: 0, max: 1 })),
  prefix: Schema.optional(NoBraces)
}).check(
  Schema.makeFilter((settings) =>
    settings.maxPermits === undefined || settings.maxPermits >= settings.permits || {
      path: ["maxPermits"],
      issue: `must be an integer ≥ permits (${settings.permits}), got ${settings.maxPermits}`
    }
  ),
  Schema.makeFilter((options) => {
    if (options.storeDown === "local" && options.localShare === undefined) {
      return { path: ["localShare"], issue: M.localShareNeeded(options.permits) }
    }
    return options.storeDown === "local" || options.localShare === undefined ||
      { path: ["localShare"], issue: M.localShareUnused(options.storeDown) }
  })
)

/** @internal */
export const resolve = (options: Api.Options): Settings => {
  const name: unknown = options.name
  if (typeof name !== "string" || name.length === 0 || !M.hasNoBraces(name)) throw illegal(M.badName(name))
  const { lanes: _lanes, name: _, ...limits } = options
  const decoded = OptionSchema.decodeResult(Options, OptionSchema.owner("bulkhead", name), ["name", "lanes"])(limits)
  if (Result.isFailure(decoded)) throw illegal(decoded.failure)
  const valid = decoded.success
  const storeDown = valid.storeDown ?? "fail-closed"
  return {
    name,
    permits: valid.permits,
    maxPermits: valid.maxPermits ?? valid.permits,
    maxWaiting: valid.maxWaiting ?? Infinity,
    maxWait: valid.maxWait ?? Duration.infinity,
    leaseTtlMillis: Math.round(
      valid.leaseTtl === undefined ? Ticket.defaultLeaseTtlMillis : Duration.toMillis(valid.leaseTtl)
    ),
    onLeaseLost: valid.onLeaseLost ?? "log",
    storeDown,
    localShare: storeDown === "local" && valid.localShare !== undefined ? valid.localShare : 1,
    prefix: valid.prefix ?? Ticket.defaultPrefix,
    lanes: options.lanes === undefined ? undefined : laneSettings(name, options.lanes)
  }
}

const laneSettings = (name: string, lanes: BulkheadLanes.Lanes): LaneSettings => {
  const decoded = BulkheadLanes.decode(name, lanes)
  return { ...decoded, text: policyText(decoded.policy), fair: decoded.policy._tag === "fairShare" }
}

/** The permits of the local fallback for a fleet of `permits` (`FleetTicket.fallbackPermits`). @internal */
export const fallbackPermits = (settings: Settings, permits: number): number =>
  Ticket.fallbackPermits(permits, settings.localShare)

/**
 * The keys of `Options` (PERMITS, MAX_PERMITS, MAX_WAITING, MAX_WAIT, LEASE_TTL, ON_LEASE_LOST,
 * STORE_DOWN, LOCAL_SHARE, PREFIX), each read as text and decoded through the same schema.
 *
 * @internal
 */
export const config: Config.Config<Omit<Api.Options, "name">> = OptionSchema.config(Options, "a Redis bulkhead")
