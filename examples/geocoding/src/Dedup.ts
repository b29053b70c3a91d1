/**
 * Identical questions are asked once. Queries are keyed by their normal form; a lookup of a key
 * already in flight is merged into the one running (every caller gets its answer), and at most
 * `capacity` answers are kept, least recently used out first, so memory stays flat on any batch. A
 * lookup every provider refused is not kept: a later duplicate asks again.
 *
 * Two plain `Map`s rather than Effect's `Cache`: a batch asks this once per row, and a row
 * answered from memory (nine in ten at a million rows) then costs a map read and no fiber, no
 * `Deferred`, no `Equal`/`Hash` key; `cached` lets the pipeline answer it without a worker at all.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { normalize } from "./Normalize.js"
import type { Resolution, Router, Unresolved } from "./Router.js"

export interface Dedup {
  /** The answer kept for this query, counted as a row answered from memory; `undefined` when none is kept. */
  readonly cached: (query: string) => Resolution | undefined
  readonly resolve: (query: string) => Effect.Effect<Resolution, Unresolved>
  /** Lookups sent to the router and rows answered from the cache or a lookup in flight. */
  readonly stats: Effect.Effect<{ readonly lookups: number; readonly deduplicated: number; readonly size: number }>
}

export const make = (router: Router, capacity: number) =>
  Effect.sync(() => {
    // A `Map` iterates in insertion order: re-inserting on every hit keeps the least recently
    // used answer first, where eviction takes it.
    const answers = new Map<string, Resolution>()
    const inFlight = new Map<string, Deferred.Deferred<Resolution, Unresolved>>()
    let lookups = 0
    let deduplicated = 0

    const hit = (key: string): Resolution | undefined => {
      const answer = answers.get(key)
      if (answer === undefined) return undefined
      answers.delete(key)
      answers.set(key, answer)
      deduplicated++
      return answer
    }

    const keep = (key: string, answer: Resolution) => {
      answers.set(key, answer)
      if (answers.size > capacity) answers.delete(answers.keys().next().value as string)
    }

    // The first caller of a key runs the lookup; whatever ends it (an answer, a refusal, an
    // interruption) completes the callers merged into it and leaves the in-flight map. Registering
    // and installing that clean-up are one uninterruptible step: a key never stays in flight
    // with nobody to complete it.
    const lookup = (key: string, query: string) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(Deferred.make<Resolution, Unresolved>(), (deferred) => {
          inFlight.set(key, deferred)
          lookups++
          return restore(router.resolve(query)).pipe(
            Effect.onExit((exit) => {
              inFlight.delete(key)
              if (Exit.isSuccess(exit) && capacity > 0) keep(key, exit.value)
              return Deferred.done(deferred, exit)
            })
          )
        })
      )

    const self: Dedup = {
      cached: (query) => hit(normalize(query)),
      resolve: (query) =>
        Effect.suspend(() => {
          const key = normalize(query)
          const answer = hit(key)
          if (answer !== undefined) return Effect.succeed(answer)
          const running = inFlight.get(key)
          if (running !== undefined) {
            deduplicated++
            return Deferred.await(running)
          }
          return lookup(key, query)
        }),
      stats: Effect.sync(() => ({ lookups, deduplicated, size: answers.size }))
    }
    return self
  })
