/** @internal */
import { formatMillis } from "@sluice/core/Verdict"
import * as Duration from "effect/Duration"

/**
 * A duration as a short figure (`2s`, `1s 500ms`, `0`), written by the core so that both Effect
 * lines print the same.
 *
 * @internal
 */
export const formatDuration = (d: Duration.Duration): string => formatMillis(Duration.toMillis(d))

/** @internal */
export { plural } from "@sluice/core/Verdict"

/**
 * Whose policy refused: its own name, and the provider that used it (`undefined` for a breaker or
 * a budget used on its own).
 *
 * @internal
 */
export interface Owner {
  readonly name: string
  readonly provider: string | undefined
}
