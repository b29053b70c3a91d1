/**
 * The Redis limiter store's operations on plain values: for each request, the script it runs with
 * its keys and arguments (`LimiterCommands`), or the answer decided in this process; and what the
 * limiter's store-down policy answers when Redis fails: a fail-closed error's sentence, an
 * unlimited start, or the local store's decision (`MemoryStore`, at the share the policy names).
 * Both Effect lines' Redis stores run these steps, each keeping only its effects: the round trip,
 * the clock, the error class and the log.
 *
 * @since 0.1.0
 */
import type { LimitSpec } from "./Algorithm.js"
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
  type ReserveReply,
  runsKeyOf,
  scaleLimits,
  stateKeyOf
} from "./LimiterCommands.js"
import { costsOf } from "./LimiterInput.js"
import type { ScriptName } from "./LimiterScripts.js"
import * as LimiterStoreMessages from "./LimiterStoreMessages.js"
import * as MemoryStore from "./MemoryStore.js"
import type { Observation, RefundRequest, ReserveRequest } from "./MemoryStore.js"

// -----------------------------------------------------------------------------
// settings
// -----------------------------------------------------------------------------

/**
 * What one limiter does while Redis is unreachable, `localShare` of each limit with `"local"`.
 *
 * @since 0.1.0
 * @category settings
 */
export interface Policy {
  readonly storeDown: "fail-closed" | "fail-open" | "local"
  readonly localShare: number
}

/**
 * The store's resolved settings the operations read.
 *
 * @since 0.1.0
 * @category settings
 */
export interface Settings {
  readonly prefix: string
  readonly defaultPolicy: Policy
  /** By limiter key. */
  readonly policies: ReadonlyMap<string, Policy>
}

// -----------------------------------------------------------------------------
// steps
// -----------------------------------------------------------------------------

/**
 * What the store answers for a reserve: the scripts' replies, a local reservation (its id
 * negated, so that its refund goes back to the local store), or an unlimited start.
 *
 * @since 0.1.0
 * @category steps
 */
export type ReserveResult =
  | ReserveReply
  | {
    readonly _tag: "Reserved"
    readonly delayMillis: number
    readonly reservation: number
    readonly pausedMillis: number
    readonly restore?: undefined
    readonly unlimited: true
  }

/**
 * A settle of a started reservation (`reservation` as `reserve` answered it).
 *
 * @since 0.1.0
 * @category steps
 */
export type SettleRequest = MemoryStore.SettleRequest & { readonly reservation: number }

/**
 * What a failed command answers, by the key's store-down policy: a value, or the message of the
 * error a fail-closed limiter fails with.
 *
 * @since 0.1.0
 * @category steps
 */
export type Down<A> =
  | { readonly _tag: "Answer"; readonly value: A }
  | { readonly _tag: "FailClosed"; readonly message: string }

/**
 * An answer decided in this process, with no command: `run` when the binding runs the step.
 *
 * @since 0.1.0
 * @category steps
 */
export interface Local<A> {
  readonly _tag: "Local"
  readonly run: () => A
  /** A warning to log first. */
  readonly warning: string | undefined
}

/**
 * One script in one round trip.
 *
 * @since 0.1.0
 * @category steps
 */
export interface Call<A> {
  readonly _tag: "Call"
  /** What the store was doing, for the error's sentence (`LimiterStoreMessages.commandFailed`). */
  readonly operation: "reserve" | "refund" | "settle" | "tighten" | "pause" | "readPause"
  readonly key: string
  readonly script: ScriptName
  /** How many of the arguments are Redis keys (they come first). */
  readonly keyCount: number
  /** The arguments, with the deciding instant (`""`: the server's `TIME`, see `nowArgument`). */
  readonly args: (now: string) => ReadonlyArray<string>
  readonly decode: Decoder<A>
  /** What answers when the command failed with `message`, run when it failed. */
  readonly down: (message: string) => Down<A>
  /** Run when the command is sent, before it: what this process keeps as well. */
  readonly first: (() => void) | undefined
  /** A warning to log first. */
  readonly warning: string | undefined
}

/**
 * @since 0.1.0
 * @category steps
 */
export type Step<A> = Local<A> | Call<A>

/**
 * The steps of each operation of the store.
 *
 * @since 0.1.0
 * @category steps
 */
export interface Operations {
  readonly reserve: (request: ReserveRequest) => Step<ReserveResult>
  readonly refund: (request: RefundRequest) => Step<boolean>
  readonly settle: (request: SettleRequest) => Step<void>
  /** `usable` and `ignored` as `LimiterInput.usableObservations` splits the request's. */
  readonly tighten: (
    request: { readonly key: string; readonly limits: ReadonlyArray<LimitSpec> },
    observations: { readonly usable: ReadonlyArray<Observation>; readonly ignored: string | undefined }
  ) => Step<void>
  /** Kept locally as well: when Redis goes down, this process still honours what it learned. */
  readonly pause: (key: string, millis: number) => Step<void>
  readonly readPause: (key: string) => Step<number>
}

const answer = <A>(value: A): Down<A> => ({ _tag: "Answer", value })

const local = <A>(run: () => A, warning?: string): Local<A> => ({ _tag: "Local", run, warning })

/**
 * The operations of a store under `settings.prefix`, each Redis key's TTL padded by `ttlPad`
 * milliseconds (the client clock's, `"0"` on the server's). The limiters whose policy is `local`
 * decide on one `MemoryStore` while Redis is down, at the instant `now` reads (epoch
 * milliseconds, the binding's clock).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (settings: Settings, ttlPad: string, now: () => number): Operations => {
  const { prefix } = settings
  const memory = new MemoryStore.MemoryStore()
  const encodings = new WeakMap<ReadonlyArray<LimitSpec>, Encoded>()
  const encoded = (limits: ReadonlyArray<LimitSpec>): Encoded => {
    let found = encodings.get(limits)
    if (found === undefined) {
      found = encode(limits)
      encodings.set(limits, found)
    }
    return found
  }
  /** A request's Redis keys, kept on its limits' encoding (a limiter always uses one key). */
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

  /** The request on the share of its limits the local store decides on. */
  const localShare = <R extends { readonly key: string; readonly limits: ReadonlyArray<LimitSpec> }>(
    request: R
  ): R => ({
    ...request,
    limits: scaleLimits(request.limits, policyOf(request.key).localShare)
  })

  /** The policy's answer when a command fails: `value`, unless the limiter fails closed. */
  const downTo = <A>(key: string, value: () => A) => (message: string): Down<A> =>
    policyOf(key).storeDown === "fail-closed"
      ? { _tag: "FailClosed", message: LimiterStoreMessages.failsClosed(message, key) }
      : answer(value())

  const call = <A>(
    operation: Call<A>["operation"],
    key: string,
    script: ScriptName,
    keyCount: number,
    args: (now: string) => ReadonlyArray<string>,
    decode: Decoder<A>,
    down: (message: string) => Down<A>,
    extra?: { readonly first?: () => void; readonly warning?: string | undefined }
  ): Call<A> => ({
    _tag: "Call",
    operation,
    key,
    script,
    keyCount,
    args,
    decode,
    down,
    first: extra?.first,
    warning: extra?.warning
  })

  const reserveDown = (request: ReserveRequest) => (message: string): Down<ReserveResult> => {
    const policy = policyOf(request.key)
    switch (policy.storeDown) {
      case "fail-closed":
        return { _tag: "FailClosed", message: LimiterStoreMessages.failsClosed(message, request.key) }
      case "fail-open": {
        // Unlimited, except for a pause this process learned: a known cooldown is still honoured.
        const pause = memory.readPause(request.key, now())
        return answer(
          pause > request.maxWaitMillis
            ? { _tag: "Refused", delayMillis: pause, retryAfterMillis: pause - request.maxWaitMillis, binding: -1 }
            : { _tag: "Reserved", delayMillis: pause, reservation: 0, pausedMillis: pause, unlimited: true }
        )
      }
      case "local": {
        // Local reservations get negative ids, so that their refunds go back to the local store.
        const result = memory.reserve(localShare(request), now())
        return answer(result._tag === "Reserved" ? { ...result, reservation: -result.reservation } : result)
      }
    }
  }

  const reserve = (request: ReserveRequest): Step<ReserveResult> => {
    const encoding = encoded(request.limits)
    const keys = keysFor(encoding, request.key, request.limits.length)
    const maxWait = maxWaitArgument(request.maxWaitMillis)
    const down = reserveDown(request)
    const gcra = encoding.gcra
    const costs = costsOf(request)
    // a single GCRA limit charged 0 is a start the general script lets through uncharged
    if (gcra !== undefined && costs[0] > 0) {
      const { advance, signature, slack } = gcraIncrements(gcra, costs[0])
      return call(
        "reserve",
        request.key,
        "reserveGcra",
        1,
        (now) => [keys.state, now, ttlPad, maxWait, signature, slack, advance],
        decodeReserve,
        down
      )
    }
    return call(
      "reserve",
      request.key,
      "reserve",
      keys.all.length,
      (now) => [...keys.all, now, ttlPad, maxWait, ...encoding.limitArgs, ...numberArgs(costs)],
      decodeReserve,
      down
    )
  }

  const refund = (request: RefundRequest): Step<boolean> => {
    if (request.reservation < 0) {
      const back = { ...localShare(request), reservation: -request.reservation }
      return local(() => memory.refund(back, now()))
    }
    // admitted without a quota (failing open): there is nothing to give back
    if (request.reservation === 0) return local(() => false)
    const encoding = encoded(request.limits)
    const keys = keysFor(encoding, request.key, request.limits.length)
    return call(
      "refund",
      request.key,
      "refund",
      keys.all.length + 1,
      (now) => [
        ...keys.all,
        runsKeyOf(prefix, request.key),
        now,
        ttlPad,
        String(request.reservation),
        ...encoding.limitArgs,
        ...numberArgs(costsOf(request)),
        ...numberArgs(request.restore)
      ],
      decodeRefund,
      downTo(request.key, () => false)
    )
  }

  const settle = (request: SettleRequest): Step<void> => {
    if (request.reservation < 0) {
      const scaled = localShare(request)
      return local(() => memory.settle(scaled, now()))
    }
    // admitted without a quota (failing open): there is nothing to correct
    if (request.reservation === 0) return local(() => undefined)
    const encoding = encoded(request.limits)
    const keys = keysFor(encoding, request.key, request.limits.length)
    return call(
      "settle",
      request.key,
      "settle",
      keys.all.length,
      (now) => [
        ...keys.all,
        now,
        ttlPad,
        String(request.reservation),
        ...encoding.limitArgs,
        ...numberArgs(request.reserved),
        ...numberArgs(request.actual),
        ...numberArgs(request.restore)
      ],
      decodeVoid,
      downTo(request.key, () => undefined)
    )
  }

  const tighten: Operations["tighten"] = (request, { ignored, usable }) => {
    const warning = ignored === undefined ? undefined : LimiterStoreMessages.ignoredObservations(prefix, ignored)
    if (usable.length === 0) return local(() => undefined, warning)
    const encoding = encoded(request.limits)
    const keys = keysFor(encoding, request.key, request.limits.length)
    return call(
      "tighten",
      request.key,
      "tighten",
      keys.all.length,
      (now) => [...keys.all, now, ttlPad, ...encoding.limitArgs, ...observationArgs(usable)],
      decodeVoid,
      downTo(request.key, () => undefined),
      { warning }
    )
  }

  const pause: Operations["pause"] = (key, millis) =>
    call(
      "pause",
      key,
      "pause",
      1,
      (now) => [stateKeyOf(prefix, key), now, ttlPad, String(millis)],
      decodeVoid,
      downTo(key, () => undefined),
      { first: () => memory.pause(key, millis, now()) }
    )

  const readPause: Operations["readPause"] = (key) =>
    call(
      "readPause",
      key,
      "readPause",
      1,
      (now) => [stateKeyOf(prefix, key), now, ttlPad],
      decodePause,
      downTo(key, () => memory.readPause(key, now()))
    )

  return { reserve, refund, settle, tighten, pause, readPause }
}
