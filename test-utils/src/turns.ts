import { Effect } from "effect"

/**
 * Lets every runnable fiber take `turns` scheduler turns: enough for forked fibers to reach the
 * point where they wait, without moving the TestClock.
 */
export const yieldTurns = (turns = 20): Effect.Effect<void> => Effect.repeatN(Effect.yieldNow(), turns)
