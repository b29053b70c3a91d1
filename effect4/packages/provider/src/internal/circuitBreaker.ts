/** @internal */
import { BreakerState, type Judgement } from "@sluice/core/BreakerState"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as ProviderError from "../ProviderError.js"
import type { Owner } from "./format.js"

/** @internal */
export { BreakerState as CircuitBreaker }

/** @internal */
export type { Admission, BreakerSettings, Judgement, State } from "@sluice/core/BreakerState"

/**
 * Runs `self` if the breaker admits it, else fails at once with `CircuitOpen` naming `name`; the
 * breaker learns how `self` ended as `judge` reads its exit. Admission and the watch on the exit
 * are taken with no interruption in between, so that a probe never stays in flight for good.
 *
 * @internal
 */
export const guard = <A, E, R>(
  breaker: BreakerState,
  owner: Owner,
  self: Effect.Effect<A, E, R>,
  judge: (exit: Exit.Exit<A, E>) => Judgement
): Effect.Effect<A, E | ProviderError.CircuitOpen, R> =>
  Effect.clockWith((clock) =>
    Effect.uninterruptibleMask((restore): Effect.Effect<A, E | ProviderError.CircuitOpen, R> => {
      const admission = breaker.admit(clock.currentTimeMillisUnsafe())
      if (admission._tag === "Refuse") {
        return Effect.fail(
          new ProviderError.CircuitOpen({
            breaker: owner.name,
            provider: owner.provider,
            state: admission.state,
            failures: admission.failures,
            openedFor: Duration.millis(admission.openedForMillis),
            retryAfter: Duration.millis(admission.retryAfterMillis)
          })
        )
      }
      const probe = admission.probe
      return Effect.onExit(
        restore(self),
        (exit) => Effect.sync(() => breaker.settle(probe, judge(exit), clock.currentTimeMillisUnsafe()))
      )
    })
  )

/**
 * What a provider and `withCircuitBreaker` run through: sluice's own breaker (the core state
 * machine), or Effect 4's `CircuitBreaker` under one key. `judge` reads how the call ended.
 *
 * @internal
 */
export interface Policy {
  readonly guard: <A, E, R>(
    self: Effect.Effect<A, E, R>,
    owner: Owner,
    judge: (exit: Exit.Exit<A, E>) => Judgement
  ) => Effect.Effect<A, unknown, R>
  /** The circuit's state now, for the provider's stats. */
  readonly state: Effect.Effect<"closed" | "open" | "half-open">
}

/** @internal */
export const machinePolicy = (machine: BreakerState): Policy => ({
  guard: (self, owner, judge) => guard(machine, owner, self, judge),
  state: Effect.sync(() => machine.state)
})
