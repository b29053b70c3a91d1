import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Undici from "@effect/platform-node/Undici"
import * as HttpPoolLedger from "@sluice/core/HttpPoolLedger"
import * as HttpPreconnected from "@sluice/core/HttpPreconnected"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import type { Socket } from "node:net"
import type * as Api from "../HttpPool.js"
import * as errors from "./errors.js"
import { durationMillis, httpOrigin } from "./options.js"

/** @internal */
export const tag = Context.Service<Api.HttpPool, Api.Service>("@sluice/http/HttpPool")

const illegal = (message: string) => new Cause.IllegalArgumentError(message)

const millis = (input: Duration.Input | undefined, fallback: number, what: string): number =>
  input === undefined
    ? fallback
    : Result.getOrThrowWith(durationMillis(what, input, false), (why) => illegal(`HttpPool: ${why}`))

/**
 * The origin of an http(s) URL, the unit pools are kept per: scheme, host and port. `label` names
 * where the URL came from, for the error a URL without an http(s) origin dies with.
 */
export const originOf = (url: string, label = "URL"): string => Result.getOrThrowWith(httpOrigin(label, url), illegal)

/**
 * Connections opened ahead of their pool (`@sluice/core/HttpPreconnected`), and the one
 * housekeeping fiber, for the pool's scope, that closes each still waiting at its deadline on the
 * pool's clock: `put` (called from a connect callback, outside any fiber) queues it on `expiries`.
 */
const makePreconnected = (keepAliveTimeout: number) =>
  Effect.clockWith((clock) =>
    Effect.map(Queue.unbounded<HttpPreconnected.Expiry>(), (expiries) => {
      const preconnected = new HttpPreconnected.Preconnected<Socket>(
        keepAliveTimeout,
        () => clock.currentTimeMillisUnsafe(),
        (expiry) => Queue.offerUnsafe(expiries, expiry)
      )
      const housekeeping: Effect.Effect<never> = Effect.forever(
        Effect.flatMap(Queue.take(expiries), (expiry) =>
          Effect.flatMap(clock.currentTimeMillis, (now) =>
            Effect.andThen(
              Effect.sleep(Duration.millis(Math.max(0, expiry.deadline - now))),
              Effect.sync(expiry.expire)
            )))
      )
      return { preconnected, housekeeping }
    })
  )

/** @internal */
export const make = (options?: Api.Options | undefined): Effect.Effect<Api.Service, never, Scope.Scope> =>
  Effect.gen(function*() {
    const limits = HttpPoolLedger.limitsOf(options?.connectionsPerOrigin, originOf)
    if (typeof limits === "string") return yield* Effect.die(illegal(limits))
    const ledger = new HttpPoolLedger.Ledger(limits)
    const keepAliveTimeout = millis(options?.keepAliveTimeout, 4_000, "keepAliveTimeout")
    const connectTimeout = millis(options?.connectTimeout, 10_000, "connectTimeout")

    const connectNew = Undici.buildConnector({ timeout: connectTimeout })
    const { housekeeping, preconnected } = yield* makePreconnected(keepAliveTimeout)
    // undici's own connector, except that a connection `preconnect` opened for the origin goes first
    const connect: Undici.buildConnector.connector = preconnected.connector(connectNew, originOf)

    const agent = yield* Effect.acquireRelease(
      Effect.sync(() =>
        new Undici.Agent({
          keepAliveTimeout,
          connect,
          // one request per connection: a permit is a connection, nothing else shares it
          pipelining: 1,
          // undici calls this on the first request to an origin, after the layers reserved
          factory: (origin, opts) =>
            new Undici.Pool(origin, { ...opts, connections: ledger.create(originOf(String(origin))) })
        })
      ),
      (agent) => Effect.andThen(Effect.sync(() => preconnected.close()), Effect.promise(() => agent.destroy()))
    )
    // housekeeping the pool's scope owns: interrupted when the pool closes
    yield* Effect.forkScoped(housekeeping)

    const reserve: Api.Service["reserve"] = ({ connections, origin, provider }) =>
      Effect.suspend(() => {
        if (!HttpPoolLedger.isCount(connections)) {
          return Effect.die(illegal(HttpPoolLedger.reservedNotCount(provider, connections)))
        }
        const reserved = ledger.reserve(originOf(origin), provider, connections)
        return reserved._tag === "TooSmall"
          ? Effect.fail(new errors.PoolTooSmall(reserved.refusal))
          : Effect.addFinalizer(() => Effect.sync(reserved.release))
      })

    const preconnect: Api.Service["preconnect"] = (url, connections) =>
      Effect.suspend(() => {
        if (!HttpPoolLedger.isCount(connections)) {
          return Effect.die(illegal(HttpPoolLedger.preconnectNotCount(url, connections)))
        }
        const origin = originOf(url, "HttpPool: the URL of preconnect")
        const held = HttpPoolLedger.pooledConnections(agent.stats, originOf, origin)
        const requested = ledger.room(origin, connections, held, preconnected.count(origin))
        // each waits for the pool as soon as it is open, not when the slowest has answered
        const open = Effect.callback<string | undefined>((resume) => {
          const interrupt = preconnected.open(connectNew, origin, (failure) => resume(Effect.succeed(failure)))
          return Effect.sync(interrupt)
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

    return {
      dispatcher: agent,
      reserve,
      preconnect,
      reservations: Effect.sync(() => ledger.reservations()),
      stats: Effect.sync(() => HttpPoolLedger.poolStats(agent.stats, originOf, preconnected))
    }
  })

/** @internal */
export const layer = (options?: Api.Options | undefined): Layer.Layer<Api.HttpPool> => Layer.effect(tag, make(options))

/** @internal */
export const layerHttpClient = NodeHttpClient.layerUndiciNoDispatcher.pipe(
  Layer.provide(Layer.effect(NodeHttpClient.Dispatcher, Effect.map(tag, (pool) => pool.dispatcher)))
)

/** @internal */
export const layerWithHttpClient = (options?: Api.Options | undefined) =>
  Layer.provideMerge(layerHttpClient, layer(options))
