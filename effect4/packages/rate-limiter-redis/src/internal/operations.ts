/**
 * The store's operations: each one script, its arguments, and what the limiter's store-down
 * policy answers when Redis fails.
 *
 * @internal
 */
import {
  decodePause,
  type Decoder,
  decodeRefund,
  decodeReserve,
  decodeVoid,
  encode,
  type Encoded,
  gcraIncrements,
  keysOf,
  maxWaitArgument,
  numberArgs,
  observationArgs,
  runsKeyOf,
  scaleLimits,
  stateKeyOf
} from "@sluice/core/LimiterCommands"
import type { ScriptName } from "@sluice/core/LimiterScripts"
import * as LimiterStoreMessages from "@sluice/core/LimiterStoreMessages"
import * as RateLimiterStore from "@sluice/rate-limiter/RateLimiterStore"
import type * as RedisConnection from "@sluice/redis/RedisConnection"
import * as Effect from "effect/Effect"
import type { Policy, Resolved } from "./settings.js"

/** A script as the connection runs it. */
export type Script = RedisConnection.Script

/**
 * Runs one script in one round trip and answers its decoded reply, or `fallback`'s answer when
 * Redis fails.
 *
 * @internal
 */
export type RunScript = <A>(
  operation: string,
  key: string,
  script: Script,
  keyCount: number,
  args: ReadonlyArray<string>,
  decode: Decoder<A>,
  fallback: (
    error: RateLimiterStore.RateLimiterStoreError
  ) => Effect.Effect<A, RateLimiterStore.RateLimiterStoreError>
) => Effect.Effect<A, RateLimiterStore.RateLimiterStoreError>

/** @internal */
export interface Context {
  readonly prefix: string
  readonly settings: Resolved
  /** Milliseconds added to every TTL (the client clock's, 0 on the server's). */
  readonly ttlPad: string
  /** Decides for the limiters whose policy is `local` while Redis is down. */
  readonly local: RateLimiterStore.Service
  readonly scripts: { readonly [Name in ScriptName]: Script }
  readonly runScript: RunScript
  /** The script's deciding instant as its first argument (empty: the server's `TIME`). */
  readonly withNow: <A, E>(f: (now: string) => Effect.Effect<A, E>) => Effect.Effect<A, E>
}

/** @internal */
export const operations = (context: Context): RateLimiterStore.Service => {
  const { local, prefix, runScript, settings, ttlPad, withNow } = context
  const loaded = context.scripts
  const encodings = new WeakMap<ReadonlyArray<RateLimiterStore.LimitSpec>, Encoded>()
  const encoded = (limits: ReadonlyArray<RateLimiterStore.LimitSpec>): Encoded => {
    let found = encodings.get(limits)
    if (found === undefined) {
      found = encode(limits)
      encodings.set(limits, found)
    }
    return found
  }
  const keysFor = (encoding: Encoded, key: string, limits: number) => {
    let keys = encoding.keys
    if (keys === undefined || keys.key !== key) {
      const all = keysOf(prefix, key, limits)
      keys = { key, state: all[0], all }
      encoding.keys = keys
    }
    return keys
  }

  const policyOf = (key: string): Policy => settings.policies.get(key) ?? settings.defaultPolicy

  const failClosed = (key: string, error: RateLimiterStore.RateLimiterStoreError) =>
    Effect.fail(
      new RateLimiterStore.RateLimiterStoreError({
        message: LimiterStoreMessages.failsClosed(error.message, key),
        cause: error.cause
      })
    )

  const reserveDown = (
    request: RateLimiterStore.ReserveRequest,
    error: RateLimiterStore.RateLimiterStoreError
  ): Effect.Effect<RateLimiterStore.ReserveResult, RateLimiterStore.RateLimiterStoreError> => {
    const policy = policyOf(request.key)
    switch (policy.storeDown) {
      case "fail-closed":
        return failClosed(request.key, error)
      case "fail-open":
        // Unlimited, except for a pause this process learned: a known cooldown is still honoured.
        return Effect.map(
          local.readPause(request.key),
          (pause): RateLimiterStore.ReserveResult =>
            pause > request.maxWaitMillis
              ? { _tag: "Refused", delayMillis: pause, retryAfterMillis: pause - request.maxWaitMillis, binding: -1 }
              : { _tag: "Reserved", delayMillis: pause, reservation: 0, pausedMillis: pause, unlimited: true }
        )
      case "local":
        // Local reservations get negative ids, so that their refunds go back to the local store.
        return Effect.map(
          local.reserve({ ...request, limits: scaleLimits(request.limits, policy.localShare) }),
          (result) => result._tag === "Reserved" ? { ...result, reservation: -result.reservation } : result
        )
    }
  }

  const reserve = (
    request: RateLimiterStore.ReserveRequest
  ): Effect.Effect<RateLimiterStore.ReserveResult, RateLimiterStore.RateLimiterStoreError> => {
    const encoding = encoded(request.limits)
    const keys = keysFor(encoding, request.key, request.limits.length)
    const maxWait = maxWaitArgument(request.maxWaitMillis)
    const down = (error: RateLimiterStore.RateLimiterStoreError) => reserveDown(request, error)
    const gcra = encoding.gcra
    const costs = RateLimiterStore.costsOf(request)
    // a single GCRA limit charged 0 is a start the general script lets through uncharged
    if (gcra !== undefined && costs[0] > 0) {
      const { advance, signature, slack } = gcraIncrements(gcra, costs[0])
      return withNow((now) =>
        runScript(
          "reserve",
          request.key,
          loaded.reserveGcra,
          1,
          [
            keys.state,
            now,
            ttlPad,
            maxWait,
            signature,
            slack,
            advance
          ],
          decodeReserve,
          down
        )
      )
    }
    return withNow((now) =>
      runScript(
        "reserve",
        request.key,
        loaded.reserve,
        keys.all.length,
        [
          ...keys.all,
          now,
          ttlPad,
          maxWait,
          ...encoding.limitArgs,
          ...numberArgs(costs)
        ],
        decodeReserve,
        down
      )
    )
  }

  const refund = (
    request: RateLimiterStore.RefundRequest
  ): Effect.Effect<boolean, RateLimiterStore.RateLimiterStoreError> => {
    if (request.reservation < 0) {
      const share = policyOf(request.key).localShare
      return local.refund({
        ...request,
        limits: scaleLimits(request.limits, share),
        reservation: -request.reservation
      })
    }
    if (request.reservation === 0) return Effect.succeed(false)
    const encoding = encoded(request.limits)
    const keys = keysFor(encoding, request.key, request.limits.length)
    return withNow((now) =>
      runScript(
        "refund",
        request.key,
        loaded.refund,
        keys.all.length + 1,
        [
          ...keys.all,
          runsKeyOf(prefix, request.key),
          now,
          ttlPad,
          String(request.reservation),
          ...encoding.limitArgs,
          ...numberArgs(RateLimiterStore.costsOf(request)),
          ...numberArgs(request.restore)
        ],
        decodeRefund,
        (error) =>
          policyOf(request.key).storeDown === "fail-closed" ? failClosed(request.key, error) : Effect.succeed(false)
      )
    )
  }

  const settle = (
    request: RateLimiterStore.SettleRequest
  ): Effect.Effect<void, RateLimiterStore.RateLimiterStoreError> => {
    if (request.reservation < 0) {
      const share = policyOf(request.key).localShare
      return local.settle({
        ...request,
        limits: scaleLimits(request.limits, share),
        reservation: -request.reservation
      })
    }
    // admitted without a quota (failing open): there is nothing to correct
    if (request.reservation === 0) return Effect.void
    const keys = keysFor(encoded(request.limits), request.key, request.limits.length)
    return withNow((now) =>
      runScript(
        "settle",
        request.key,
        loaded.settle,
        keys.all.length,
        [
          ...keys.all,
          now,
          ttlPad,
          String(request.reservation),
          ...encoded(request.limits).limitArgs,
          ...numberArgs(request.reserved),
          ...numberArgs(request.actual),
          ...numberArgs(request.restore)
        ],
        decodeVoid,
        (error) => policyOf(request.key).storeDown === "fail-closed" ? failClosed(request.key, error) : Effect.void
      )
    )
  }

  const tighten = (
    request: RateLimiterStore.TightenRequest
  ): Effect.Effect<void, RateLimiterStore.RateLimiterStoreError> => {
    const { ignored, usable } = RateLimiterStore.usableObservations(request)
    const warn = ignored === undefined
      ? Effect.void
      : Effect.logWarning(LimiterStoreMessages.ignoredObservations(prefix, ignored))
    if (usable.length === 0) return warn
    const keys = keysFor(encoded(request.limits), request.key, request.limits.length)
    return Effect.andThen(
      warn,
      withNow((now) =>
        runScript(
          "tighten",
          request.key,
          loaded.tighten,
          keys.all.length,
          [...keys.all, now, ttlPad, ...encoded(request.limits).limitArgs, ...observationArgs(usable)],
          decodeVoid,
          (error) => policyOf(request.key).storeDown === "fail-closed" ? failClosed(request.key, error) : Effect.void
        )
      )
    )
  }

  return {
    reserve,
    refund,
    settle,
    tighten,
    pause: (key, millis) =>
      // Kept locally as well: when Redis goes down, this process still honours what it learned.
      Effect.andThen(
        local.pause(key, millis),
        withNow((now) =>
          runScript(
            "pause",
            key,
            loaded.pause,
            1,
            [stateKeyOf(prefix, key), now, ttlPad, String(millis)],
            decodeVoid,
            (error) => policyOf(key).storeDown === "fail-closed" ? failClosed(key, error) : Effect.void
          )
        )
      ),
    readPause: (key) =>
      withNow((now) =>
        runScript(
          "readPause",
          key,
          loaded.readPause,
          1,
          [stateKeyOf(prefix, key), now, ttlPad],
          decodePause,
          (error) => policyOf(key).storeDown === "fail-closed" ? failClosed(key, error) : local.readPause(key)
        )
      )
  }
}
