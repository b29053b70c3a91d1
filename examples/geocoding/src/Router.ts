/**
 * Routing and fallback. Each lookup starts at the provider a smooth weighted round-robin picks
 * (weights: the quotas, so every provider gets its share of the batch and all of them saturate
 * together), then falls to the next provider on any refusal: a full or timed-out bulkhead, the
 * limiter, an open circuit, a timeout, a 429 or 5xx, a body that does not decode, an exhausted
 * quota. When every provider refused only because it was busy (bulkhead, limiter), the lookup
 * tries another round after a short pause rather than fail an item that a moment later would pass.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Geocoder, Place, ProviderName, SearchError } from "./providers/Geocoder.js"

export type Resolution =
  | { readonly _tag: "Found"; readonly provider: ProviderName; readonly place: Place }
  | { readonly _tag: "NotFound"; readonly provider: ProviderName }

export interface Refusal {
  readonly provider: ProviderName
  readonly reason: string
  readonly message: string
}

/** Every provider refused; `refusals` says who and why, in the order they were asked. */
export class Unresolved {
  readonly _tag = "Unresolved"
  constructor(readonly refusals: ReadonlyArray<Refusal>) {}
  get message(): string {
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

export interface Router {
  readonly resolve: (query: string) => Effect.Effect<Resolution, Unresolved>
  /** Refusals by provider and reason: how often each provider passed an item on. */
  readonly refusals: () => ReadonlyMap<ProviderName, ReadonlyMap<string, number>>
}

export const make = (geocoders: ReadonlyArray<Geocoder>): Router => {
  // Smooth weighted round-robin (as nginx does): deterministic, and no provider gets two turns in
  // a row more often than its weight says.
  const weights = geocoders.map((geocoder) => geocoder.settings.rate)
  const total = weights.reduce((a, b) => a + b, 0)
  const current = weights.map(() => 0)
  const pick = (): number => {
    let best = 0
    for (let i = 0; i < current.length; i++) {
      current[i] += weights[i]
      if (current[i] > current[best]) best = i
    }
    current[best] -= total
    return best
  }
  const counts = new Map<ProviderName, Map<string, number>>(geocoders.map((g) => [g.name, new Map()]))
  const count = (provider: ProviderName, reason: string) => {
    const reasons = counts.get(provider)
    if (reasons !== undefined) reasons.set(reason, (reasons.get(reason) ?? 0) + 1)
  }

  const reasonOf = (error: SearchError): string => error._tag === "UpstreamStatus" ? `${error.status}` : error._tag

  const round = (query: string): Effect.Effect<Resolution, Unresolved> =>
    Effect.suspend(() => {
      const start = pick()
      const refusals: Array<Refusal> = []
      const attempt = (offset: number): Effect.Effect<Resolution, Unresolved> => {
        if (offset === geocoders.length) return Effect.fail(new Unresolved(refusals))
        // the picked provider first, then the others in order of preference
        const index = offset === 0 ? start : offset <= start ? offset - 1 : offset
        const geocoder = geocoders[index]
        return geocoder.search(query).pipe(
          Effect.map((place): Resolution =>
            Option.match(place, {
              onNone: () => ({ _tag: "NotFound", provider: geocoder.name }),
              onSome: (place) => ({ _tag: "Found", provider: geocoder.name, place })
            })
          ),
          Effect.catchAll((error) => {
            const reason = reasonOf(error)
            count(geocoder.name, reason)
            refusals.push({ provider: geocoder.name, reason, message: error.message })
            return attempt(offset + 1)
          })
        )
      }
      return attempt(0)
    })

  const resolve = (query: string, n = 1): Effect.Effect<Resolution, Unresolved> =>
    round(query).pipe(
      Effect.catchAll((unresolved) =>
        n < ROUNDS && unresolved.refusals.some((refusal) => busy.has(refusal.reason))
          ? Effect.zipRight(Effect.sleep(Duration.times(ROUND_PAUSE, 2 ** (n - 1))), resolve(query, n + 1))
          : Effect.fail(unresolved)
      )
    )

  return { resolve: (query) => resolve(query), refusals: () => counts }
}
