/**
 * The Redis store's options, declared once as a schema on `@sluice/options`: the store decodes
 * them and `config` reads the same schema, so options and Config can never disagree. Every error
 * names the option and the value; the sentences are `@sluice/core/LimiterStoreMessages`'. The
 * connection's options are `RedisConnection`'s to check.
 *
 * @internal
 */
import * as LimiterStoreMessages from "@sluice/core/LimiterStoreMessages"
import { OptionSchema } from "@sluice/options"
import * as RedisConnection from "@sluice/redis/RedisConnection"
import * as Config from "effect/Config"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as RedisRateLimiterStore from "../RedisRateLimiterStore.js"

/** @internal */
export const clientClockTtlPadMillis = LimiterStoreMessages.clientClockTtlPadMillis

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

/** Who the messages name. @internal */
export const who = LimiterStoreMessages.who

const policyFields = {
  storeDown: Schema.optional(OptionSchema.literal("fail-closed", "fail-open", "local")),
  localShare: Schema.optional(OptionSchema.number({ greaterThan: 0, max: 1 }))
}

/** A store-down policy: `localShare` with `"local"`, and only there. */
const policyRule = Schema.makeFilter((
  policy: {
    readonly storeDown?: RedisRateLimiterStore.StoreDownPolicy | undefined
    readonly localShare?: number | undefined
  }
) => {
  if (policy.storeDown === "local") {
    return policy.localShare !== undefined || { path: ["localShare"], issue: LimiterStoreMessages.localShareRequired }
  }
  // alone, the policy key is missing or misspelt, and the fallback it meant would silently be
  // fail-closed
  return policy.localShare === undefined || {
    path: ["storeDown"],
    issue: LimiterStoreMessages.localShareNeedsLocal(
      policy.storeDown === undefined ? undefined : OptionSchema.show(policy.storeDown)
    )
  }
})

const Policy = Schema.Struct(policyFields).check(policyRule)

const Prefix = OptionSchema.make(Schema.String.check(Schema.makeFilter(LimiterStoreMessages.isPrefix)), {
  rule: LimiterStoreMessages.prefixRule,
  fromText: (text) => text
})

const configFields = { ...policyFields, prefix: Schema.optional(Prefix) }

/** The keys `config` reads: PREFIX, STORE_DOWN, LOCAL_SHARE. */
const ConfigKeys = Schema.Struct(configFields).check(policyRule)

const StoreOptions = Schema.Struct({
  ...configFields,
  limiters: Schema.optional(Schema.Record(Schema.String, Policy)),
  clock: Schema.optional(OptionSchema.literal("server", "client"))
}).check(policyRule)

const policyOf = (policy: {
  readonly storeDown?: RedisRateLimiterStore.StoreDownPolicy | undefined
  readonly localShare?: number | undefined
}): Policy => ({
  storeDown: policy.storeDown ?? "fail-closed",
  localShare: policy.localShare ?? 1
})

/** The connection's keys, checked by `RedisConnection`. */
const connectionKeys = ["url", "redis", "commandTimeout", "connectTimeout", "cluster", "clusterOptions", "client"]

const decodeStore = OptionSchema.decodeResult(StoreOptions, who, connectionKeys)

/**
 * The store's own options (the connection's are `RedisConnection`'s to check); the error names
 * the store.
 *
 * @internal
 */
export const resolveStore = (options: RedisRateLimiterStore.StoreOptions): Result.Result<Resolved, string> =>
  Result.map(decodeStore(options), (valid) => ({
    prefix: valid.prefix ?? LimiterStoreMessages.defaultPrefix,
    defaultPolicy: policyOf(valid),
    policies: new Map(Object.entries(valid.limiters ?? {}).map(([name, policy]) => [name, policyOf(policy)])),
    clock: valid.clock ?? "server"
  }))

/**
 * The options of a store with a connection of its own: the store's, and the connection's.
 *
 * @internal
 */
export const resolve = (
  options: RedisRateLimiterStore.Options
): Result.Result<{ readonly store: Resolved; readonly connection: RedisConnection.FromUrl }, string> => {
  const connection: RedisConnection.FromUrl = {
    url: options.url,
    redis: options.redis,
    commandTimeout: options.commandTimeout,
    connectTimeout: options.connectTimeout
  }
  const checked = RedisConnection.check(connection)
  if (Result.isFailure(checked)) return Result.fail(`${who}: ${checked.failure}`)
  return Result.map(resolveStore(options), (store) => ({ store, connection }))
}

/**
 * The connection's keys (URL, COMMAND_TIMEOUT, CONNECT_TIMEOUT, checked and named by its own
 * Config) and the store's, decoded through the same schema as the options.
 *
 * @internal
 */
export const config: Config.Config<RedisRateLimiterStore.Options> = Config.map(
  Config.all([RedisConnection.config, OptionSchema.config(ConfigKeys, LimiterStoreMessages.configWhat)]),
  ([connection, store]): RedisRateLimiterStore.Options => ({ ...connection, ...store })
)
