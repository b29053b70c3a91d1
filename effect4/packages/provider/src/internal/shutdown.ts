/** @internal */
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import type { ProviderState } from "./providerState.js"

/**
 * Closing the provider's scope: stop admitting, wait for the calls in flight up to the grace
 * period, then interrupt them (their callers see `ProviderClosed`) and wait until each has been
 * counted out, having released what it holds. Under `gracePeriod: Infinity` (calls in their
 * callers' fibers) the first wait has no end.
 *
 * @internal
 */
export const shutdown = (provider: ProviderState): Effect.Effect<void> =>
  Effect.suspend(() => {
    provider.closing = true
    // finalizers run uninterruptibly: the wait must be interruptible for the grace period to cut it
    return Effect.interruptible(provider.drained).pipe(
      Effect.timeoutOrElse({
        duration: provider.gracePeriod,
        orElse: () =>
          Effect.suspend(() => {
            provider.graceElapsed = true
            return Effect.andThen(FiberSet.clear(provider.running), provider.drained)
          })
      })
    )
  })
