/**
 * The scheduler a provider client's calls run on by default (see `Options.scheduler`).
 *
 * undici writes a request on a kept-alive connection from a `setImmediate` of its own: it first
 * lets the socket show whether the server closed it while it was idle. Under Effect's default
 * scheduler a fiber resumed by I/O runs in the microtasks of that I/O's callback, so a turn of the
 * event loop that reads many responses runs all the work they resume in its poll phase, and a
 * request handed to undici in that turn leaves only after all of it: the delay varies with the
 * load, and requests a rate limiter spaced arrive bunched. Run from the check phase instead (each
 * fiber's wake-up an immediate), the work waits behind the writes already queued there, and the
 * poll phase only reads.
 *
 * @internal
 */
import * as Scheduler from "effect/Scheduler"

/** @internal */
export const checkPhase: Scheduler.Scheduler = Scheduler.makeBatched((runBatch) => {
  setImmediate(runBatch)
})
