/** @internal */
import * as algorithm from "@sluice/core/Algorithm"
import * as ledger from "@sluice/core/Ledger"
import * as settlement from "@sluice/core/Settlement"
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as RateLimiterStore from "../RateLimiterStore.js"

/** @internal */
export const nowMillis = (clock: Clock.Clock): number => Number(clock.unsafeCurrentTimeNanos()) / 1_000_000

interface KeyState {
  specs: ReadonlyArray<RateLimiterStore.LimitSpec>
  states: Array<algorithm.LimitState>
  /** The cooldown set by `pause`, as an instant of this store's clock (never leaves the store). */
  pauseUntil: number
  /** Which reservations can still be taken back (see `@sluice/core/Ledger`). Ids are never reused. */
  readonly ledger: ledger.Ledger
}

const sameSpec = (a: RateLimiterStore.LimitSpec, b: RateLimiterStore.LimitSpec): boolean =>
  a.algorithm === b.algorithm && a.limit === b.limit && a.windowMillis === b.windowMillis && a.burst === b.burst

/**
 * Keeps the state of each limit while its parameters stay the same; a limit whose parameters
 * changed starts afresh (its old state measures something else).
 */
const alignSpecs = (state: KeyState, specs: ReadonlyArray<RateLimiterStore.LimitSpec>): void => {
  if (state.specs === specs) return
  const states: Array<algorithm.LimitState> = []
  for (let i = 0; i < specs.length; i++) {
    const old = state.specs[i]
    states.push(old !== undefined && sameSpec(old, specs[i]) ? state.states[i] : algorithm.initialState(specs[i]))
  }
  state.specs = specs
  state.states = states
}

/** @internal */
export const unsafeMakeMemory = (clock: Clock.Clock): RateLimiterStore.Service => {
  const keys = new Map<string, KeyState>()
  const stateOf = (key: string): KeyState => {
    let state = keys.get(key)
    if (state === undefined) {
      state = { specs: [], states: [], pauseUntil: Number.NEGATIVE_INFINITY, ledger: ledger.make(0) }
      keys.set(key, state)
    }
    return state
  }

  const reserveSync = (request: RateLimiterStore.ReserveRequest): RateLimiterStore.ReserveResult => {
    const now = nowMillis(clock)
    const state = stateOf(request.key)
    alignSpecs(state, request.limits)
    const from = Math.max(now, state.pauseUntil)
    const { binding, start } = algorithm.earliestAll(
      request.limits,
      state.states,
      from,
      RateLimiterStore.costsOf(request)
    )
    const delayMillis = Math.max(0, start - now)
    if (delayMillis > request.maxWaitMillis + algorithm.EPSILON_MILLIS) {
      return {
        _tag: "Refused",
        delayMillis,
        retryAfterMillis: delayMillis - request.maxWaitMillis,
        binding
      }
    }
    const restore = [start]
    for (let i = 0; i < request.limits.length; i++) {
      restore.push(algorithm.restorePoint(request.limits[i], state.states[i], now))
    }
    algorithm.commitAll(request.limits, state.states, now, start, RateLimiterStore.costsOf(request))
    return {
      _tag: "Reserved",
      delayMillis,
      reservation: ledger.reserve(state.ledger),
      pausedMillis: Math.max(0, state.pauseUntil - now),
      restore
    }
  }

  const refundSync = (request: RateLimiterStore.RefundRequest): boolean => {
    const state = keys.get(request.key)
    if (state === undefined) return false
    const now = nowMillis(clock)
    const steps = ledger.cancel(
      state.ledger,
      request.reservation,
      RateLimiterStore.costsOf(request),
      request.restore,
      now
    )
    if (steps.length === 0) return false
    alignSpecs(state, request.limits)
    for (const step of steps) algorithm.rollbackAll(request.limits, state.states, now, step.costs, step.points)
    return true
  }

  return {
    reserve: (request) => Effect.sync(() => reserveSync(request)),
    refund: (request) => Effect.sync(() => refundSync(request)),
    settle: (request) =>
      Effect.sync(() => {
        const state = keys.get(request.key)
        if (state === undefined) return
        alignSpecs(state, request.limits)
        const now = nowMillis(clock)
        const debt = settlement.settleAll(
          request.limits,
          state.states,
          now,
          request.restore?.[0],
          request.reserved,
          request.actual,
          request.restore?.slice(1)
        )
        // A window's roll back restores a count taken before the debt: it must not erase it.
        if (debt) ledger.seal(state.ledger)
      }),
    tighten: (request) =>
      Effect.suspend(() => {
        const { ignored, usable } = RateLimiterStore.usableObservations(request)
        const state = stateOf(request.key)
        alignSpecs(state, request.limits)
        const now = nowMillis(clock)
        for (const observation of usable) {
          const i = observation.limit
          settlement.tighten(
            request.limits[i],
            state.states[i],
            now,
            observation.remaining,
            observation.resetAfterMillis
          )
        }
        return ignored === undefined ? Effect.void : Effect.logWarning(`rate limiter memory store: ${ignored}`)
      }),
    pause: (key, millis) =>
      Effect.sync(() => {
        const state = stateOf(key)
        const now = nowMillis(clock)
        const until = now + millis
        const extension = until - Math.max(now, state.pauseUntil)
        if (extension <= 0) return
        for (let i = 0; i < state.states.length; i++) {
          algorithm.postpone(state.specs[i], state.states[i], now, extension)
        }
        state.pauseUntil = until
      }),
    readPause: (key) =>
      Effect.sync(() => {
        const state = keys.get(key)
        return state === undefined ? 0 : Math.max(0, state.pauseUntil - nowMillis(clock))
      })
  }
}

/** @internal */
export const makeMemory: Effect.Effect<RateLimiterStore.Service> = Effect.map(Effect.clock, unsafeMakeMemory)
