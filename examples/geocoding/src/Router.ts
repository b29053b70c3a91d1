/**
 * Routing and fallback. Each lookup goes to the provider that would finish it soonest: the one
 * with the fewest lookups in hand for its rate (lookups sent and not yet answered ÷ client rate;
 * by Little's law, how long the ones in hand will take). So every provider gets lookups as fast as
 * it answers them, all of them saturate together, one that slows down gets fewer, and at the end
 * of a batch the last lookups go where they finish first. A provider that said when it will answer
 * again (an open circuit, a spent quota, a paused limiter) is asked last until then. A lookup falls
 * to the next provider, in the same order, on any refusal: a full or timed-out bulkhead, the
 * limiter, an open circuit, a timeout, a 429 or 5xx, a body that does not decode, an exhausted
 * quota. When every provider refused only because it was busy (bulkhead, limiter), the lookup tries
 * another round after a short pause rather than fail an item that a moment later would pass.
 */
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import { clientRate, type Geocoder, type Place, type ProviderName, type SearchError } from "./providers/Geocoder.js"

export type Resolution =
  | { readonly _tag: "Found"; readonly provider: ProviderName; readonly place: Place }
  | { readonly _tag: "NotFound"; readonly provider: ProviderName }

export interface Refusal {
  readonly provider: ProviderName
  readonly reason: string
  readonly message: string
}

/** Every provider refused; `refusals` says who and why, in the order they were asked. */
export class Unresolved extends Data.TaggedError("Unresolved")<{ readonly refusals: ReadonlyArray<Refusal> }> {
  override get message(): string {
    return this.refusals.map((refusal) => `${refusal.provider}: ${refusal.message}`).join("; ")
  }
}

/** Refusals that say "busy right now", not "broken": worth another round. */
const busy = new Set(["BulkheadFull", "PermitWaitTimeout", "RateLimitExceeded"])

/**
 * Six rounds: the pauses between them (0.2 s doubling to 3.2 s, 6.2 s in all) outlast a circuit's
 * open period (5 s), so that a lookup refused by a busy provider while another's circuit is open
 * and a third is paused is still there when the circuit lets probes through again. With four
 * (1.4 s), the fault scenario failed a row now and then on a loaded machine.
 */
const ROUNDS = 6
/** Doubling from here between rounds: 0.2 s, 0.4 s, ... 3.2 s; long enough for a burst to drain. */
const ROUND_PAUSE = Duration.millis(200)
const rounds = Schedule.exponential(ROUND_PAUSE).pipe(Schedule.intersect(Schedule.recurs(ROUNDS - 1)))

export interface Router {
  readonly resolve: (query: string) => Effect.Effect<Resolution, Unresolved>
  /** Refusals by provider and reason: how often each provider passed an item on. */
  readonly refusals: () => ReadonlyMap<ProviderName, ReadonlyMap<string, number>>
}

export const make = (geocoders: ReadonlyArray<Geocoder>): Effect.Effect<Router> =>
  Effect.map(Queue.unbounded<Deferred.Deferred<void>>(), (waiting) => {
    // Join the shortest queue, queues measured in seconds of work. A provider that said when it will
    // take calls again (an open circuit, a spent quota, a paused limiter) is asked last until then.
    const rates = geocoders.map((geocoder) => clientRate(geocoder.settings))
    const inHand = geocoders.map(() => 0)
    const awayUntil = geocoders.map(() => 0)
    const order = (now: number): Array<number> =>
      geocoders.map((_, i) => i).sort((a, b) =>
        Number(awayUntil[a] > now) - Number(awayUntil[b] > now) ||
        (inHand[a] + 1) / rates[a] - (inHand[b] + 1) / rates[b] ||
        a - b
      )

    // A provider holds at most its permits plus its bulkhead's queue; past that it would answer
    // BulkheadFull at once. When every provider that is not away is that full, a lookup waits in
    // `waiting` for the first one to free a place (first come, first served) instead of bouncing off
    // all of them and sleeping between rounds. A waiter interrupted in the queue completes its own
    // Deferred, so that a freed place passes it over; `waiters` counts the ones still waiting.
    const capacity = geocoders.map((geocoder) => geocoder.settings.permits + geocoder.settings.maxWaiting)
    let waiters = 0
    /** A freed place goes to the oldest lookup still waiting, if any. */
    const handOn: Effect.Effect<void> = Effect.flatMap(Queue.poll(waiting), (next) =>
      Option.match(next, {
        onNone: () => Effect.void,
        onSome: (waiter) =>
          Effect.flatMap(Deferred.succeed(waiter, undefined), (handed) => handed ? Effect.void : handOn)
      }))
    const release = (index: number) =>
      Effect.suspend(() => {
        inHand[index]--
        return handOn
      })
    const placeFreed = Effect.flatMap(Deferred.make<void>(), (waiter) =>
      Effect.acquireUseRelease(
        Effect.sync(() => waiters++),
        () =>
          Effect.zipRight(Queue.offer(waiting, waiter), Deferred.await(waiter)).pipe(
            // a place handed over as the lookup was interrupted goes to the next one
            Effect.onInterrupt(() =>
              Effect.flatMap(Deferred.interrupt(waiter), (stillWaiting) => stillWaiting ? Effect.void : handOn)
            )
          ),
        () => Effect.sync(() => waiters--)
      ))
    /** Every provider that is not away is full, or others already wait their turn. */
    const mustWait = (now: number, woken: boolean): boolean => {
      let present = false
      for (let i = 0; i < geocoders.length; i++) {
        if (awayUntil[i] > now) continue
        present = true
        if (inHand[i] < capacity[i]) return !woken && waiters > 0
      }
      return present
    }
    /** Until when a refusal says the provider will refuse again, in Clock milliseconds, or 0. */
    const awayFor = (error: SearchError, now: number): number => {
      switch (error._tag) {
        case "QuotaExhausted":
          return error.resetAt
        case "CircuitOpen":
          return now + Duration.toMillis(error.retryAfter)
        case "RateLimitExceeded":
          return error.reason === "paused" ? now + Duration.toMillis(error.retryAfter) : 0
        default:
          return 0
      }
    }
    const counts = new Map<ProviderName, Map<string, number>>(geocoders.map((g) => [g.name, new Map()]))
    const count = (provider: ProviderName, reason: string) => {
      const reasons = counts.get(provider)
      if (reasons !== undefined) reasons.set(reason, (reasons.get(reason) ?? 0) + 1)
    }

    const reasonOf = (error: SearchError): string => error._tag === "UpstreamStatus" ? `${error.status}` : error._tag

    const round = (query: string, woken = false): Effect.Effect<Resolution, Unresolved> =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        if (mustWait(now, woken)) return Effect.zipRight(placeFreed, round(query, true))
        const providers = order(now)
        const refusals: Array<Refusal> = []
        const attempt = (n: number): Effect.Effect<Resolution, Unresolved> => {
          if (n === providers.length) return Effect.fail(new Unresolved({ refusals }))
          const index = providers[n]
          const geocoder = geocoders[index]
          return Effect.acquireUseRelease(
            Effect.sync(() => inHand[index]++),
            () => geocoder.search(query),
            () => release(index)
          ).pipe(
            Effect.map((place): Resolution =>
              Option.match(place, {
                onNone: () => ({ _tag: "NotFound", provider: geocoder.name }),
                onSome: (place) => ({ _tag: "Found", provider: geocoder.name, place })
              })
            ),
            Effect.catchAll((error) =>
              Effect.flatMap(Clock.currentTimeMillis, (now) => {
                const reason = reasonOf(error)
                count(geocoder.name, reason)
                refusals.push({ provider: geocoder.name, reason, message: error.message })
                awayUntil[index] = Math.max(awayUntil[index], awayFor(error, now))
                return attempt(n + 1)
              })
            )
          )
        }
        return attempt(0)
      })

    // another round only while some provider refused for being busy
    const resolve = (query: string): Effect.Effect<Resolution, Unresolved> =>
      Effect.retry(round(query), {
        schedule: rounds,
        while: (unresolved) => unresolved.refusals.some((refusal) => busy.has(refusal.reason))
      })

    return { resolve, refusals: () => counts }
  })
