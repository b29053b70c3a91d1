/**
 * The clock's side of the store's commands: the rest of the encoding and decoding is
 * `@sluice/core/LimiterCommands`, shared by both lines.
 *
 * @internal
 */
import { nowArgument as fromMillis } from "@sluice/core/LimiterCommands"
import type * as Clock from "effect/Clock"

/**
 * The clock's reading in epoch milliseconds, fractional.
 *
 * @internal
 */
export const nowMillis = (clock: Clock.Clock): number => Number(clock.unsafeCurrentTimeNanos()) / 1_000_000

/**
 * The caller's clock as the scripts take it (a client clock; `clock: "server"` sends none).
 *
 * @internal
 */
export const nowArgument = (clock: Clock.Clock): string => fromMillis(nowMillis(clock))
