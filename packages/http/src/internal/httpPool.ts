import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Undici from "@effect/platform-node/Undici"
import * as HttpMessages from "@sluice/core/HttpMessages"
import * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import type { Socket } from "node:net"
import type * as Api from "../HttpPool.js"
import * as errors from "./errors.js"
import { durationMillis, httpOrigin } from "./options.js"

/** @internal */
export const tag = Context.GenericTag<Api.HttpPool, Api.Service>("@sluice/http/HttpPool")

const illegal = (message: string) => new Cause.IllegalArgumentException(message)

const millis = (input: Duration.DurationInput | undefined, fallback: number, what: string): number =>
  input === undefined
    ? fallback
    : Either.getOrThrowWith(durationMillis(what, input, false), (why) => illegal(`HttpPool: ${why}`))

/**
 * The origin of an http(s) URL, the unit pools are kept per: scheme, host and port. `label` names
 * where the URL came from, for the error a URL without an http(s) origin dies with.
 */
export const originOf = (url: string, label = "URL"): string => Either.getOrThrowWith(httpOrigin(label, url), illegal)

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
    else byOrigin.set(originOf(key, "HttpPool: a connectionsPerOrigin key"), check(n, `[${JSON.stringify(key)}]`))
  }
  return { byOrigin, fallback }
}

/**
 * Connections opened ahead of their pool, per origin, oldest first. Each is read while it waits,
 * so that a close from the server (an idle timeout, a restart) is seen and the connection
 * forgotten rather than handed to a request; anything else arriving unasked closes it too. One not
 * taken within `keepAliveTimeout` is closed, as undici closes an idle connection: `put` (called
 * from a connect callback, outside any fiber) queues it on `expiries` with its deadline on the
 * pool's clock, and one housekeeping fiber in the pool's scope closes those still waiting then.
 */
const makePreconnected = (keepAliveTimeout: number) =>
  Effect.map(
    Effect.zip(Effect.clock, Queue.unbounded<Waiting>()),
    // deadlines come in the order of `put`: every connection waits the same keepAliveTimeout
    ([clock, expiries]) => preconnectedWith(keepAliveTimeout, clock, expiries)
  )

interface Waiting {
  readonly socket: Socket
  /** When it is closed unless taken first, on the pool's clock. */
  readonly deadline: number
  released: boolean
  readonly release: () => void
  readonly drop: () => void
}

const preconnectedWith = (keepAliveTimeout: number, clock: Clock.Clock, expiries: Queue.Queue<Waiting>) => {
  const byOrigin = new Map<string, Array<Waiting>>()
  let closed = false

  /** Closes each connection still waiting at its deadline, oldest first: the pool's one timer. */
  const housekeeping: Effect.Effect<never> = Effect.forever(
    Effect.flatMap(Queue.take(expiries), (waiting) =>
      Effect.flatMap(clock.currentTimeMillis, (now) =>
        Effect.zipRight(
          Effect.sleep(Duration.millis(Math.max(0, waiting.deadline - now))),
          Effect.sync(() => {
            if (!waiting.released) waiting.drop()
          })
        )))
  )

  const forget = (origin: string, waiting: Waiting) => {
    const list = byOrigin.get(origin)
    const at = list?.indexOf(waiting) ?? -1
    if (list === undefined || at < 0) return
    list.splice(at, 1)
    if (list.length === 0) byOrigin.delete(origin)
  }

  const put = (origin: string, socket: Socket): boolean => {
    if (closed || socket.destroyed) {
      socket.destroy()
      return false
    }
    const drop = () => {
      waiting.release()
      forget(origin, waiting)
      socket.destroy()
    }
    const waiting: Waiting = {
      socket,
      deadline: clock.unsafeCurrentTimeMillis() + keepAliveTimeout,
      released: false,
      drop,
      release: () => {
        // taken, dropped or closed: the housekeeping fiber passes over it at its deadline
        waiting.released = true
        // paused again, so that nothing arrives before undici listens
        socket.off("data", drop)
        socket.pause()
        socket.off("end", drop)
        socket.off("close", drop)
        socket.off("error", drop)
      }
    }
    // read while waiting, to see the end: bytes before any request answer nothing, so they close it too
    socket.once("data", drop)
    socket.once("end", drop)
    socket.once("close", drop)
    socket.once("error", drop)
    const list = byOrigin.get(origin)
    if (list === undefined) byOrigin.set(origin, [waiting])
    else list.push(waiting)
    Queue.unsafeOffer(expiries, waiting)
    return true
  }

  const take = (origin: string): Socket | undefined => {
    const list = byOrigin.get(origin)
    let waiting: Waiting | undefined
    while ((waiting = list?.shift()) !== undefined) {
      waiting.release()
      if (list?.length === 0) byOrigin.delete(origin)
      if (!waiting.socket.destroyed && waiting.socket.readyState === "open") return waiting.socket
      waiting.socket.destroy()
    }
    return undefined
  }

  const close = () => {
    closed = true
    for (const list of byOrigin.values()) {
      for (const waiting of list) {
        waiting.release()
        waiting.socket.destroy()
      }
    }
    byOrigin.clear()
  }

  return {
    housekeeping,
    put,
    take,
    close,
    count: (origin: string): number => byOrigin.get(origin)?.length ?? 0,
    origins: (): ReadonlyArray<string> => [...byOrigin.keys()]
  } as const
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

    const connectNew = Undici.buildConnector({ timeout: connectTimeout })
    const preconnected = yield* makePreconnected(keepAliveTimeout)
    // undici's own connector, except that a connection `preconnect` opened for the origin goes first
    const connect: Undici.buildConnector.connector = (opts, callback) => {
      // a connection opened ahead named its host for TLS; a request that names another (its own
      // servername) gets a connection of its own
      const origin = originOf(`${opts.protocol}//${opts.host ?? opts.hostname}`)
      const socket = opts.servername == null || opts.servername === opts.hostname
        ? preconnected.take(origin)
        : undefined
      if (socket === undefined) return connectNew(opts, callback)
      // asynchronously, as a connection that had to open: undici resumes the client after this
      queueMicrotask(() => callback(null, socket))
    }

    const agent = yield* Effect.acquireRelease(
      Effect.sync(() =>
        new Undici.Agent({
          keepAliveTimeout,
          connect,
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
      (agent) => Effect.zipRight(Effect.sync(preconnected.close), Effect.promise(() => agent.destroy()))
    )
    // housekeeping the pool's scope owns: interrupted when the pool closes
    yield* Effect.forkScoped(preconnected.housekeeping)

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

    const preconnect: Api.Service["preconnect"] = (url, connections) =>
      Effect.suspend(() => {
        if (!Number.isInteger(connections) || connections < 1) {
          return Effect.die(illegal(`HttpPool: preconnect to ${url} asked for ${connections} connections`))
        }
        const origin = originOf(url, "HttpPool: the URL of preconnect")
        // no more than the pool could take: its size, less what it holds and what waits already
        const size = limitFor(origin) ?? created.get(origin) ?? (total(origin) > 0 ? total(origin) : undefined)
        const held = pooledConnections(origin)
        const requested = Math.max(0, Math.min(connections, (size ?? connections) - held - preconnected.count(origin)))
        const { host, hostname, port, protocol } = new URL(origin)
        const opts = { host, hostname: hostname.replace(/^\[(.*)\]$/, "$1"), port, protocol }
        // Each connection waits for the pool as soon as it is open, not when the slowest has
        // answered; one that opens after the preconnect was interrupted is closed at once.
        const open = Effect.async<string | undefined>((resume) => {
          let interrupted = false
          connectNew(opts, (error, socket) => {
            if (error !== null) resume(Effect.succeed(HttpMessages.connectFailure(error)))
            else if (interrupted) socket.destroy()
            else resume(Effect.succeed(preconnected.put(origin, socket) ? undefined : "the pool is closed"))
          })
          return Effect.sync(() => {
            interrupted = true
          })
        })
        return Effect.map(
          Effect.all(Array.from({ length: requested }, () => open), { concurrency: "unbounded" }),
          (failures): Api.Preconnected => ({
            origin,
            requested,
            opened: failures.filter((failure) => failure === undefined).length,
            failure: failures.find((failure) => failure !== undefined)
          })
        )
      })

    /** Connections undici's pool for `origin` holds now, busy or idle. */
    const pooledConnections = (origin: string): number => {
      for (const [key, raw] of Object.entries(agent.stats)) {
        if (originOf(key) === origin) return Number((raw as unknown as { connected?: number }).connected ?? 0)
      }
      return 0
    }

    const stats = Effect.sync(() => {
      const out: Record<string, Api.PoolStats> = {}
      for (const [origin, raw] of Object.entries(agent.stats)) {
        // a Pool's counters; a lone Client (not used here) reports `connected` as a boolean
        const s = raw as unknown as Partial<Record<keyof Api.PoolStats, number | boolean>>
        const key = originOf(origin)
        out[key] = {
          connected: Number(s.connected ?? 0),
          free: Number(s.free ?? 0),
          running: Number(s.running ?? 0),
          pending: Number(s.pending ?? 0),
          queued: Number(s.queued ?? 0),
          size: Number(s.size ?? 0),
          preconnected: preconnected.count(key)
        }
      }
      for (const origin of preconnected.origins()) {
        out[origin] ??= {
          connected: 0,
          free: 0,
          running: 0,
          pending: 0,
          queued: 0,
          size: 0,
          preconnected: preconnected.count(origin)
        }
      }
      return out
    })

    return { dispatcher: agent, reserve, preconnect, reservations, stats }
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
