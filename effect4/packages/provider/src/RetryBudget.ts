/**
 * A retry budget on its own, around any effect: retries are allowed while the retries in a sliding
 * window stay below `max(minRetries, ratio × first attempts)`, so that an upstream in trouble sees
 * at most `ratio` extra calls instead of a retry storm. A provider builds one from its
 * `retry.budget` option, or takes one given here; several effects may share one.
 *
 * @since 2.0.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import * as Predicate from "effect/Predicate"
import type * as Schedule from "effect/Schedule"
import { resolveBudget } from "./internal/options.js"
import * as internal from "./internal/retryBudget.js"
import type * as ProviderError from "./ProviderError.js"
import type { RetryBudget as RetryBudgetOptions } from "./ProviderOptions.js"

/**
 * @since 2.0.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("@sluice/provider/RetryBudget")

/**
 * @since 2.0.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * A budget's options: those of a provider's `retry.budget`, and its name (in
 * `RetryBudgetExhausted`).
 *
 * @since 2.0.0
 * @category models
 */
export interface Options extends RetryBudgetOptions {
  readonly name: string
}

/**
 * @since 2.0.0
 * @category models
 */
export interface Stats {
  readonly name: string
  /** First attempts and retries in the current window, and the retries it allows. */
  readonly firstAttempts: number
  readonly retries: number
  readonly allowed: number
  readonly window: Duration.Duration
}

/**
 * @since 2.0.0
 * @category models
 */
export interface RetryBudget {
  readonly [TypeId]: TypeId
  readonly name: string
  /** A snapshot of the current window. */
  readonly stats: Effect.Effect<Stats>
}

class Budget implements RetryBudget {
  readonly [TypeId]: TypeId = TypeId
  constructor(readonly name: string, readonly machine: internal.RetryBudget) {}
  get stats(): Effect.Effect<Stats> {
    return Effect.clockWith((clock) =>
      Effect.sync(() => {
        const window = this.machine.check(clock.currentTimeMillisUnsafe())
        return {
          name: this.name,
          firstAttempts: window.firsts,
          retries: window.retries,
          allowed: window.allowed,
          window: Duration.millis(this.machine.settings.windowMillis)
        }
      })
    )
  }
}

/**
 * @since 2.0.0
 * @category guards
 */
export const isRetryBudget = (u: unknown): u is RetryBudget => Predicate.hasProperty(u, TypeId)

/**
 * A budget with an empty window, without an effect. Invalid options throw an
 * `IllegalArgumentError` naming the budget and the value.
 *
 * @since 2.0.0
 * @category constructors
 */
export const makeUnsafe = (options: Options): RetryBudget =>
  new Budget(options.name, new internal.RetryBudget(resolveBudget(options)))

/**
 * @since 2.0.0
 * @category constructors
 * @deprecated Use `makeUnsafe`, Effect 4's name for it.
 */
export const unsafeMake: (options: Options) => RetryBudget = makeUnsafe

/**
 * A budget with an empty window. Defaults: `ratio` 0.1, `minRetries` 3, `window` 10 s. Invalid
 * options are a defect naming the budget and the value.
 *
 * @example
 * ```ts
 * import { RetryBudget } from "@sluice/provider"
 * import { Effect, Schedule } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   const budget = yield* RetryBudget.make({ name: "geo", ratio: 0.1 })
 *   return yield* Effect.succeed("Lyon").pipe(
 *     RetryBudget.withRetryBudget(budget, { schedule: Schedule.exponential("100 millis"), times: 2 })
 *   )
 * })
 * ```
 *
 * @since 2.0.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<RetryBudget> => Effect.sync(() => makeUnsafe(options))

/** @internal */
export const machineOf = (budget: RetryBudget): internal.RetryBudget => (budget as Budget).machine

/**
 * How `withRetryBudget` retries: `Effect.retry`'s options, the budget asked before each retry.
 *
 * @since 2.0.0
 * @category models
 */
export interface RetryPolicy<E, R = never> {
  /** The delays between attempts. Default: none. */
  readonly schedule?: Schedule.Schedule<unknown, E, R> | undefined
  /** Retries at most, besides the first attempt. Default: as many as the schedule and the budget allow. */
  readonly times?: number | undefined
  /** Which errors are retried. Default: all. */
  readonly while?: ((error: E) => boolean) | undefined
}

/**
 * Runs `self`, retried as `policy` says, each retry spent from `budget`: the first run counts as a
 * first attempt, and a retry the window cannot afford fails with `RetryBudgetExhausted` carrying
 * the error it would have retried (never retried itself).
 *
 * @since 2.0.0
 * @category combinators
 */
export const withRetryBudget: {
  <E, R2 = never>(
    budget: RetryBudget,
    policy: RetryPolicy<E, R2>
  ): <A, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | RetryBudgetExhausted, R | R2>
  <A, E, R, R2 = never>(
    self: Effect.Effect<A, E, R>,
    budget: RetryBudget,
    policy: RetryPolicy<E, R2>
  ): Effect.Effect<A, E | RetryBudgetExhausted, R | R2>
} = dual(3, <A, E, R, R2>(
  self: Effect.Effect<A, E, R>,
  budget: RetryBudget,
  policy: RetryPolicy<E, R2>
): Effect.Effect<A, E | RetryBudgetExhausted, R | R2> =>
  Effect.suspend(() => {
    const machine = machineOf(budget)
    let attempt = 0
    let last: unknown = undefined
    let refused: unknown = undefined
    const once: Effect.Effect<A, E | RetryBudgetExhausted, R> = Effect.suspend(() => {
      attempt++
      const spend = attempt === 1
        ? internal.first(machine)
        : internal.spend(machine, { name: budget.name, provider: undefined }, attempt, last)
      return Effect.andThen(
        Effect.tapError(spend, (error) => Effect.sync(() => refused = error)),
        Effect.tapError(self, (error) => Effect.sync(() => last = error))
      )
    })
    const accept = policy.while
    return Effect.retry(once, {
      schedule: policy.schedule as Schedule.Schedule<unknown, E | RetryBudgetExhausted, R2> | undefined,
      times: policy.times,
      while: (error) => error !== refused && (accept === undefined || accept(error as E))
    }) as Effect.Effect<A, E | RetryBudgetExhausted, R | R2>
  }))

/**
 * The budget's refusal (from `ProviderError`): `budget` names it; `provider` is `undefined`
 * unless a provider's retry was refused.
 *
 * @since 2.0.0
 * @category errors
 */
export type RetryBudgetExhausted = ProviderError.RetryBudgetExhausted
