/** @internal */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import { endFromOutside } from "./call.js"
import type { ProviderState } from "./state.js"

/**
 * Closing the provider's scope: stop admitting, wait for the calls in flight up to the grace
 * period, then end them with `ProviderClosed` and wait until each has released what it holds.
 *
 * @internal
 */
export const shutdown = (provider: ProviderState): Effect.Effect<void> =>
  Effect.suspend(() => {
    provider.closing = true
    if (provider.inFlight === 0) return Effect.void
    // finalizers run uninterruptibly: the wait must be interruptible for the grace period to cut it
    return Effect.interruptible(Deferred.await(provider.drained)).pipe(
      Effect.timeoutTo({
        duration: provider.gracePeriod,
        onSuccess: () => Effect.void,
        onTimeout: () =>
          Effect.zipRight(
            Effect.forEach(
              Array.from(provider.active),
              (call) => endFromOutside(call, provider.closed("grace-period-elapsed")),
              { discard: true }
            ),
            Deferred.await(provider.drained)
          )
      }),
      Effect.flatten
    )
  })
