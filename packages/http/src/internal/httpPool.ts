import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Undici from "@effect/platform-node/Undici"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type * as Api from "../HttpPool.js"
import * as errors from "./errors.js"

/** @internal */
export const tag = Context.GenericTag<Api.HttpPool, Api.Service>("@sluice/http/HttpPool")

const illegal = (message: string) => new Cause.IllegalArgumentException(message)

const millis = (input: Duration.DurationInput | undefined, fallback: number, what: string): number => {
  if (input === undefined) return fallback
  const ms = Duration.toMillis(Duration.decode(input))
  if (!(ms > 0) || !Number.isFinite(ms)) {
    throw illegal(`HttpPool: ${what} must be a finite duration > 0, got ${String(input)}`)
  }
  return ms
}

/** The origin of a URL, the unit pools are kept per: scheme, host and port. */
export const originOf = (url: string): string => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw illegal(`not an absolute URL: ${JSON.stringify(url)}`)
  }
  return parsed.origin
}

const limitsOf = (
  option: Api.Options["connectionsPerOrigin"]
): { readonly byOrigin: ReadonlyMap<string, number>; readonly fallback: number | undefined } => {
  const check = (n: number, where: string) => {
    if (!Number.isInteger(n) || n < 1) {
      throw illegal(`HttpPool: connectionsPerOrigin${where} must be an integer ≥ 1, got ${n}`)
    }
    return n
  }
  if (option === undefined) return { byOrigin: new Map(), fallback: undefined }
  if (typeof option === "number") return { byOrigin: new Map(), fallback: check(option, "") }
  const byOrigin = new Map<string, number>()
  let fallback: number | undefined
  for (const [key, n] of Object.entries(option)) {
    if (key === "*") fallback = check(n, `["*"]`)
    else byOrigin.set(originOf(key), check(n, `[${JSON.stringify(key)}]`))
  }
  return { byOrigin, fallback }
}

/** @internal */
export const make = (options?: Api.Options | undefined): Effect.Effect<Api.Service, never, Scope.Scope> =>
  Effect.gen(function*() {
    const limits = limitsOf(options?.connectionsPerOrigin)
    const keepAliveTimeout = millis(options?.keepAliveTimeout, 4_000, "keepAliveTimeout")
    const connectTimeout = millis(options?.connectTimeout, 10_000, "connectTimeout")
    const limitFor = (origin: string): number | undefined => limits.byOrigin.get(origin) ?? limits.fallback

    // origin → provider → connections; a provider may reserve on an origin more than once (two
    // layers for one name): the reservations add up, since each layer has its own bulkhead
    const reserved = new Map<string, Map<string, number>>()
    const created = new Map<string, number | null>()
    const total = (origin: string): number => {
      let sum = 0
      for (const n of reserved.get(origin)?.values() ?? []) sum += n
      return sum
    }

    const agent = yield* Effect.acquireRelease(
      Effect.sync(() =>
        new Undici.Agent({
          keepAliveTimeout,
          connect: { timeout: connectTimeout },
          // one request per connection: a permit is a connection, nothing else shares it
          pipelining: 1,
          // undici calls this on the first request to an origin, after the layers reserved
          factory: (origin, opts) => {
            const key = originOf(String(origin))
            const size = limitFor(key) ?? (total(key) > 0 ? total(key) : null)
            created.set(key, size)
            return new Undici.Pool(origin, { ...opts, connections: size })
          }
        })
      ),
      (agent) => Effect.promise(() => agent.destroy())
    )

    const reserve: Api.Service["reserve"] = ({ connections, origin: url, provider }) =>
      Effect.suspend(() => {
        if (!Number.isInteger(connections) || connections < 1) {
          return Effect.die(illegal(`HttpPool: provider "${provider}" reserved ${connections} connections`))
        }
        const origin = originOf(url)
        const providers = Object.fromEntries(reserved.get(origin) ?? [])
        providers[provider] = (providers[provider] ?? 0) + connections
        const required = total(origin) + connections
        const limit = limitFor(origin)
        const poolSize = created.get(origin)
        if (limit !== undefined && required > limit) {
          return Effect.fail(
            new errors.PoolTooSmall({ origin, connections: limit, required, providers, reason: "limit" })
          )
        }
        if (poolSize !== undefined && poolSize !== null && required > poolSize) {
          return Effect.fail(
            new errors.PoolTooSmall({ origin, connections: poolSize, required, providers, reason: "created" })
          )
        }
        const byProvider = reserved.get(origin) ?? new Map<string, number>()
        byProvider.set(provider, (byProvider.get(provider) ?? 0) + connections)
        reserved.set(origin, byProvider)
        return Effect.addFinalizer(() =>
          Effect.sync(() => {
            const left = (byProvider.get(provider) ?? 0) - connections
            if (left > 0) byProvider.set(provider, left)
            else byProvider.delete(provider)
          })
        )
      })

    const reservations = Effect.sync(() =>
      [...new Set([...reserved.keys(), ...created.keys()])].sort().map((origin): Api.OriginReservations => {
        const size = created.get(origin)
        return {
          origin,
          providers: Object.fromEntries(reserved.get(origin) ?? []),
          reserved: total(origin),
          limit: limitFor(origin),
          poolSize: size === null ? undefined : size
        }
      })
    )

    const stats = Effect.sync(() => {
      const out: Record<string, Api.PoolStats> = {}
      for (const [origin, raw] of Object.entries(agent.stats)) {
        // a Pool's counters; a lone Client (not used here) reports `connected` as a boolean
        const s = raw as unknown as Partial<Record<keyof Api.PoolStats, number | boolean>>
        out[originOf(origin)] = {
          connected: Number(s.connected ?? 0),
          free: Number(s.free ?? 0),
          running: Number(s.running ?? 0),
          pending: Number(s.pending ?? 0),
          queued: Number(s.queued ?? 0),
          size: Number(s.size ?? 0)
        }
      }
      return out
    })

    return { dispatcher: agent, reserve, reservations, stats }
  })

/** @internal */
export const layer = (options?: Api.Options | undefined): Layer.Layer<Api.HttpPool> => Layer.scoped(tag, make(options))

/** @internal */
export const layerHttpClient = NodeHttpClient.layerUndiciWithoutDispatcher.pipe(
  Layer.provide(Layer.effect(NodeHttpClient.Dispatcher, Effect.map(tag, (pool) => pool.dispatcher)))
)

/** @internal */
export const layerWithHttpClient = (options?: Api.Options | undefined) =>
  Layer.provideMerge(layerHttpClient, layer(options))
