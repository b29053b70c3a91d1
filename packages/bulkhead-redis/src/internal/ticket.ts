/** A ticket's life in this process: the ticket is core's (`FleetTicket`), its wait is here. @internal */
import * as Core from "@sluice/core/FleetTicket"
import type * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { randomBytes } from "node:crypto"

/** @internal */
export { ASKING, GONE, GRANTED, HELD, LOCAL, numberOf, QUEUED, type State, wake } from "@sluice/core/FleetTicket"

/**
 * One of this instance's tickets in the fleet's order: its lost-lease signal a `Deferred`, its
 * fallback permits a scope.
 *
 * @internal
 */
export type FleetTicket = Core.Ticket<Deferred.Deferred<void>, Scope.CloseableScope>

/**
 * A new mark, one per bulkhead instance, after this process's random part.
 *
 * @internal
 */
export const newMark: () => string = Core.marks(randomBytes(6).toString("hex"))

/** @internal */
export const make = (mark: string, cost: number): FleetTicket => Core.make(mark, cost)

const grantedNow = Effect.succeed(true)
const lostNow = Effect.succeed(false)

/**
 * Waits for the ticket's wake (at once if it was woken already); an interrupted wait leaves nothing
 * behind. One waiter per ticket: a callback on it rather than a `Deferred`, which Effect 3 builds by
 * copying its prototype, once per queued ticket (weighed against one in RFC 0002: it pays).
 *
 * @internal
 */
export const woken = (ticket: FleetTicket): Effect.Effect<boolean> =>
  Effect.async<boolean>((resume) => {
    if (ticket.outcome !== undefined) return resume(ticket.outcome ? grantedNow : lostNow)
    ticket.resume = (granted) => resume(granted ? grantedNow : lostNow)
    return Effect.sync(() => {
      ticket.resume = undefined
    })
  })
