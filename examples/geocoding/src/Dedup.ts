/**
 * Identical questions are asked once. Queries are keyed by their normal form; Effect's `Cache`
 * merges the lookups of a key already in flight into the one running (they all get its answer) and
 * keeps at most `capacity` answers, least recently used out first, so memory stays flat on any
 * batch. A lookup every provider refused is not kept: a later duplicate asks again.
 */
import * as Cache from "effect/Cache"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Equal from "effect/Equal"
import * as Exit from "effect/Exit"
import * as Hash from "effect/Hash"
import { normalize } from "./Normalize.js"
import type { Resolution, Router, Unresolved } from "./Router.js"

/** A cache key: equal by normal form, carrying the query as first spelled, which is what is sent. */
class Question implements Equal.Equal {
  constructor(readonly key: string, readonly query: string) {}
  [Equal.symbol](that: Equal.Equal): boolean {
    return that instanceof Question && that.key === this.key
  }
  [Hash.symbol](): number {
    return Hash.string(this.key)
  }
}

export interface Dedup {
  readonly resolve: (query: string) => Effect.Effect<Resolution, Unresolved>
  /** Lookups sent to the router (misses) and answered from the cache or a lookup in flight (hits). */
  readonly stats: Effect.Effect<{ readonly lookups: number; readonly deduplicated: number; readonly size: number }>
}

export const make = (router: Router, capacity: number) =>
  Effect.gen(function*() {
    const cache = yield* Cache.makeWith({
      capacity,
      lookup: (question: Question) => router.resolve(question.query),
      timeToLive: (exit) => Exit.isSuccess(exit) ? Duration.infinity : Duration.zero
    })
    const self: Dedup = {
      resolve: (query) => cache.get(new Question(normalize(query), query)),
      stats: Effect.map(
        cache.cacheStats,
        (stats) => ({ lookups: stats.misses, deduplicated: stats.hits, size: stats.size })
      )
    }
    return self
  })
