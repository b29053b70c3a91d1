/**
 * A bulkhead shared by a fleet: K permits under a name, held by the calls of every process that
 * uses the name, with the local bulkhead's API, errors and budgets.
 *
 * Waiters take a ticket from one global counter and are served in that order: a released permit
 * goes to the oldest ticket, a heavy ticket at the head is not overtaken, a newcomer never barges.
 * A held permit is a lease its process renews; a process that dies loses its permits when the lease
 * ends, and they pass on. A grant is told in the reply to the script that made it, when it went to
 * the bulkhead that sent the script, and otherwise by one message on a shard channel; a periodic
 * renewal is the safety net for a lost message.
 *
 * @since 2.0.0
 */
export * as RedisBulkhead from "./RedisBulkhead.js"
