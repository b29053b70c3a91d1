/**
 * The arithmetic of the three algorithms, on plain numbers (milliseconds) and plain state objects,
 * so that the same rules run in the memory store (on reservations), in the limiter's local pacer
 * (on actual starts), and, transcribed, in the Redis store's Lua script.
 *
 * Every function takes `now` and never reads a clock. Times are milliseconds since the Unix epoch
 * (fractional), which is what makes fixed windows align to UTC (a day window starts at midnight).
 *
 * @since 0.1.0
 */
export * as Algorithm from "./Algorithm.js"

/**
 * A circuit breaker's state machine on plain numbers: which calls it admits, and how their
 * outcomes open and close the circuit. Times are milliseconds passed in as `now`; the binding owns
 * the clock, the interruption mask and the watch on each call's end.
 *
 * @since 0.1.0
 */
export * as BreakerState from "./BreakerState.js"

/**
 * The sentences of a bulkhead's refusals, built from their fields: both Effect lines' `BulkheadFull`
 * and `PermitWaitTimeout` take their `message` from here, so that the same refusal prints the same
 * bytes on Effect 3 and Effect 4.
 *
 * @since 0.1.0
 */
export * as BulkheadMessages from "./BulkheadMessages.js"

/**
 * The sentences of a fleet bulkhead, built from their fields: its option rules, its defects, its
 * `BulkheadStoreError`, and what it logs (a lost lease, a late grant, an outage and the recovery).
 * Both Effect lines' `RedisBulkhead` take them from here, so that the same event prints the same
 * bytes on Effect 3 and Effect 4.
 *
 * @since 0.1.0
 */
export * as FleetMessages from "./FleetMessages.js"

/**
 * The Lua scripts of the distributed bulkhead, each one round trip and atomic: `batch` for the
 * acquires and releases of one event-loop turn (`internal/fleetScripts/batch.ts`), and one script per other
 * operation, each after the common prelude (`internal/fleetScripts/prelude.ts`). These modules import nothing from
 * Effect, so that a build for another Effect major reuses them.
 *
 * Layout, for a bulkhead named `n` under the prefix `p` (every key and the channel share the hash
 * tag `{n}`, so they sit in one Redis Cluster slot and one script may touch them all):
 *
 * - `p{n}:seq`: the ticket counter (`INCR`): the global FIFO order.
 * - `p{n}:meta`: a hash — `permits` (K, shared by the fleet), `used` (permits held under live
 *   leases) and `wanted` (permits the queue asks for). Invariants: `used` is the sum of the costs
 *   in `held`, `wanted` the sum of the costs in `queue`, `used ≤ permits` except after a shrink.
 * - `p{n}:queue`: a sorted set, waiting tickets scored by ticket number (the order of arrival).
 * - `p{n}:wlease`: a sorted set, waiting tickets scored by their lease deadline.
 * - `p{n}:held`: a sorted set, granted tickets scored by their lease deadline (a waiter granted
 *   from the queue keeps its waiting lease's: a grant never outlives the waiter's last renewal).
 * - `p{n}:grants:<mark>`: the shard channel (`SPUBLISH`) of the bulkhead instance whose nonces
 *   start with `<mark>`: each grant of its tickets, members space-separated after the limit of the
 *   instance's head run (below). One channel per instance, so that a release wakes only the process
 *   it granted to (a member without a mark goes to `p{n}:grants`). A `batch` script does not publish
 *   the grants of its own caller's tickets: it returns them.
 *
 * A ticket's member is `<ticket>:<cost>:<ttl>:<nonce>`: the number orders it, the cost and the
 * lease TTL (ms) travel with it (no lookup), and the caller's nonce (`<mark>.<n>`: the instance's
 * mark, random per process, and a counter) makes it a lease id no other grant can have, even after
 * Redis lost the counter (a restart without persistence). A renew or release of a member that is
 * not there does nothing: fencing. A holder admitted by the local fallback while Redis was down
 * claims the member `c:<cost>:<ttl>:<nonce>`.
 *
 * The head run: when the oldest waiting tickets are one instance's, a script tells that instance
 * (in its reply, or with the grants it publishes to it) a ticket number below which every waiting
 * ticket is its own. New tickets join at the back, numbered higher, so that stays true:
 * the instance can hand a permit its caller releases straight to its own oldest waiter, which is
 * the fleet's oldest, and tell Redis in its next script (`h`), instead of waiting for Redis to
 * grant it.
 *
 * Every script first expires what is due (held leases past their deadline give their permits
 * back, waiting tickets past theirs leave the queue), then grants from the head while the head's
 * cost fits — never past a head that does not fit — and publishes the grants. An acquire that fits
 * with nobody queued, and a release with nobody queued, skip it: nothing can come of it, and the
 * dead holders' permits are reclaimed by the next script that needs them.
 * Deadlines are on the server's `TIME`, so processes whose clocks disagree agree on leases.
 *
 * ARGV of every script starts with the grant channels' common name (`p{n}:grants`) and this
 * process's permits (used only when the shared `permits` is missing: a Redis that restarted empty,
 * or a name that fell idle).
 *
 * @since 0.1.0
 */
export * as FleetScripts from "./FleetScripts.js"

/**
 * A fleet bulkhead's ticket on plain values: its states, its nonce and lease-id (member) formats,
 * its one-waiter wake, the options' defaults and bounds, the lease arithmetic, and the decoding of
 * the scripts' replies (`FleetScripts`). Both Effect lines' `RedisBulkhead` build on it, each
 * keeping only its effects (the wait, the signal of a lost lease, the fallback's scope).
 *
 * @since 0.1.0
 */
export * as FleetTicket from "./FleetTicket.js"

/**
 * The HTTP middleware's sentences and judgements on plain values: the messages of its errors, the
 * warnings of its usage metering, what a cost a limiter can charge is, and which failures never
 * reached the upstream. Both Effect lines' `@sluice/http` build their text here, so that the same
 * failure prints the same bytes on Effect 3 and Effect 4. Durations come in nanoseconds
 * (undefined: infinite), so that no Effect `Duration` crosses into the core.
 *
 * @since 0.1.0
 */
export * as HttpMessages from "./HttpMessages.js"

/**
 * The HTTP pool's ledger on plain values: the limits per origin the user set, the connections each
 * provider reserved on an origin, the size each origin's pool was created with, and what that
 * allows (a reservation refused as too large, the connections a preconnect may open, the counters
 * of the pools). Both Effect lines' `HttpPool` keep only their effects around it: the undici
 * agent, the scope a reservation lasts for, the connections opened ahead.
 *
 * @since 0.1.0
 */
export * as HttpPoolLedger from "./HttpPoolLedger.js"

/**
 * Connections an HTTP pool opened ahead of its pool, per origin, oldest first, on plain values.
 * Each is read while it waits, so that a close from the server (an idle timeout, a restart) is
 * seen and the connection forgotten rather than handed to a request; anything else arriving
 * unasked closes it too. One not taken within `keepAliveTimeout` is closed, as undici closes an
 * idle connection: the binding's timer expires each waiting connection at its deadline (on the
 * clock `now` reads), in the order they were put. Both Effect lines' `HttpPool` own the timer,
 * the connector and the scope; sockets are Node's, seen through the part read here.
 *
 * @since 0.1.0
 */
export * as HttpPreconnected from "./HttpPreconnected.js"

/**
 * The permits and the waiters of a bulkhead with lanes (RFC 0004), as plain synchronous code: no
 * Effect, no fibers, no clock (the caller passes `now` when a ticket queues). It decides who is
 * next; the caller wakes fibers, runs timers and records metrics, as with `PermitQueue`.
 *
 * Two policies:
 * - `priority`: a ticket is due when it queued plus its lane's `yieldForMillis` (zero for the first
 *   lane); the next grant goes to the earliest due ticket, ties to the higher lane. Within a lane
 *   that is FIFO, and a lower lane gains rank at one millisecond per millisecond waited.
 * - `fairShare`: deficit round-robin over the lanes with tickets queued, FIFO within a lane: each
 *   turn adds the lane's weight to its credit (in permits), and the lane is granted while its head
 *   costs no more than its credit. A lane whose queue empties leaves the round and loses its
 *   credit, so an idle lane's share goes to the others.
 *
 * Under both, the ticket chosen next that does not fit the free permits stops every grant behind
 * it, so no lighter ticket of any lane overtakes a heavy one. The policy chooses only while a
 * permit is free: with every permit held nothing is chosen, and a fair share's round stays put. Every method runs to completion on
 * JavaScript's one thread, so each is atomic.
 *
 * @since 0.1.0
 */
export * as LaneQueue from "./LaneQueue.js"

/**
 * A provider's lanes as its stats report them: each lane the bulkhead reports, with the
 * provider's attempts and permit waits in it, and one sentence with the share of the permits it
 * got (against its weight's share, under fair share). Both Effect lines build `stats.lanes` here.
 *
 * @since 0.4.0
 */
export * as LaneSummaries from "./LaneSummaries.js"

/**
 * Which reservations of a key can still be taken back, on plain numbers: the rule the memory store
 * runs and the Redis store's refund script transcribes.
 *
 * Reservation ids grow by one per reservation. Those in (`floor`, `latest`] are stacked last in the
 * limits' state, in id order: taking back `latest` cannot add a start to any window, since nothing
 * was decided on top of it. A reservation cancelled below the top cannot go at once; it is
 * remembered (consecutive ones merged into one run), and when the top goes, the run just below it
 * goes too, and so on down the stack: a mass cancellation gives every slot back once the latest
 * reservation goes, whatever the order of the cancellations.
 *
 * A reservation made after a roll back (`latest` below the last id given) seals everything below
 * it (`floor` rises): the ids between were taken back and the stack is no longer consecutive.
 * Cancelled runs are forgotten once their starts are past (rolling back over them would gain
 * nothing now), once sealed, and beyond `MAX_CANCELLED_RUNS`: forgetting loses slots, never the
 * quota.
 *
 * @since 0.1.0
 */
export * as Ledger from "./Ledger.js"

/**
 * What the Redis limiter store sends and reads back, on plain values: key names, each script's
 * arguments (encoded once per limiter) and the decoding of replies. The scripts themselves are
 * `LimiterScripts`; the binding runs them and reads the clock. `writeBatcher` groups the commands
 * of one tick into few socket writes.
 *
 * @since 0.1.0
 */
export * as LimiterCommands from "./LimiterCommands.js"

/**
 * What a rate limiter reads of its options and a store of its requests, on plain numbers: a
 * limit's defaults, a request's cost on each limit, and the observations a store can apply.
 *
 * @since 0.1.0
 */
export * as LimiterInput from "./LimiterInput.js"

/**
 * The sentences of a rate limiter's errors and option refusals, built from their fields in
 * milliseconds: both Effect lines' `RateLimitExceeded` and `CostExceedsCapacity` take their
 * `message` from here, so that the same refusal prints the same bytes on Effect 3 and Effect 4.
 *
 * @since 0.1.0
 */
export * as LimiterMessages from "./LimiterMessages.js"

/**
 * The Redis limiter store's operations on plain values: for each request, the script it runs with
 * its keys and arguments (`LimiterCommands`), or the answer decided in this process; and what the
 * limiter's store-down policy answers when Redis fails: a fail-closed error's sentence, an
 * unlimited start, or the local store's decision (`MemoryStore`, at the share the policy names).
 * Both Effect lines' Redis stores run these steps, each keeping only its effects: the round trip,
 * the clock, the error class and the log.
 *
 * @since 0.1.0
 */
export * as LimiterOperations from "./LimiterOperations.js"

/**
 * The Lua scripts of the Redis store: one script per operation, each one round trip and atomic.
 *
 * They transcribe `Algorithm`, `Ledger` and `Settlement` (as `@sluice/rate-limiter`'s memory store runs them)
 * line for line, so a decision made in Redis is the decision the memory store would make on the
 * same clock (the contract suite checks it to the millisecond).
 *
 * Layout, for a limiter key `k` under the prefix `p` (all keys share the hash tag `{k}`, so they sit
 * in one Redis Cluster slot and one script may touch them all; `v2` names this layout, and a
 * release that changes it changes the name):
 *
 * - `p{k}:v2`: the limiter's state, one binary string written with the `struct` library built into
 *   Redis' Lua: a header of six little-endian doubles — the number of limits, the reservation
 *   counters (last id given, latest live id, floor), the pause (an instant of the deciding clock,
 *   `-inf` for none) and `born` (the ids of this life of the key start above it) —
 *   then per limit four doubles (GCRA's theoretical arrival time, the instant the key's TTL is
 *   known to cover (0 when unknown), the running total it was ever charged and the latest instant
 *   its schedule was decided from; a fixed window's base index and count; a sliding window's
 *   latest unit dropped from its log while still in a window), the limit's own pause (`tighten`'s)
 *   and its signature (`algorithm:limit:window:burst`, zero-terminated). Doubles round-trip
 *   exactly, and fixed-width fields decode into locals with one call and no table: one GET and one
 *   SET per decision, the fewest commands a script can run.
 * - `p{k}:v2:log:<i>`: limit `i`'s log of start times when it is a sliding window (a list, oldest
 *   first, written with `%.17g`): every unit still in a window, at most `limit + 4096` of them, so
 *   that a roll back finds the units below it.
 * - `p{k}:v2:cancelled`: the reservations cancelled below the latest one (`refund`'s).
 *
 * Every write sets a TTL: the time until the state can no longer change a decision (the bucket is
 * full again, the last window is over, the log has slid out, the pause is over), plus `ttlPad`.
 * `reserveGcra` keeps the TTL instead (`KEEPTTL`) when the one set before already covers the new
 * state: the setting of an expiry is the dearest part of a SET, and the takes that share a
 * millisecond on a busy key share one.
 *
 * Replies carry whole numbers as integers and others as exact decimal strings (Redis truncates a
 * Lua number to an integer).
 *
 * ARGV of every script starts with `now` (milliseconds; empty: read the server's `TIME`) and
 * `ttlPad` (milliseconds added to every TTL; 0 on the server's clock).
 *
 * One module per concept under `internal/limiterScripts/`, plain strings importing nothing.
 *
 * @since 0.1.0
 */
export * as LimiterScripts from "./LimiterScripts.js"

/**
 * The Redis rate limiter store's sentences and fixed settings on plain values: how a failed
 * command, a limiter failing closed, the degraded mode and its end, and an ignored observation
 * read, and the rules of its options. Both Effect lines' `RedisRateLimiterStore` take them from
 * here, so that the same failure prints the same bytes on Effect 3 and Effect 4.
 *
 * @since 0.1.0
 */
export * as LimiterStoreMessages from "./LimiterStoreMessages.js"

/**
 * The in-memory limiter store on plain numbers: per key, the state of each limit, its pause and its
 * ledger, each operation at the `now` its binding read. One instance is owned by one store of a
 * binding, which wraps each call in its effect and logs what it ignored.
 *
 * @since 0.1.0
 */
export * as MemoryStore from "./MemoryStore.js"

/**
 * The sentences an option refusal is made of, and the strict readings of Config text, on plain
 * values: both Effect lines' `OptionSchema` build their messages here, so the same input gets
 * byte-identical messages on Effect 3 and Effect 4.
 *
 * @since 0.1.0
 */
export * as OptionMessages from "./OptionMessages.js"

/**
 * A limiter's local pacer, on plain numbers: the limits applied to the actual starts of one
 * process, so that timers firing late never bunch starts, and the pause that holds this process's
 * callers. The store decides reservations; the pacer only holds a start that would break a limit
 * where it happens. Every method takes `now` (milliseconds) and never reads a clock.
 *
 * @since 0.1.0
 */
export * as Pacer from "./Pacer.js"

/**
 * The permits and the waiter queue of a bulkhead, as plain synchronous code: no Effect, no
 * fibers, no clock. It decides who holds permits and who is next; the caller wakes fibers, runs
 * timers and records metrics. Importing nothing from Effect, it is reused as is by any runtime.
 *
 * Every method runs to completion on JavaScript's one thread, so each is atomic.
 *
 * @since 0.1.0
 */
export * as PermitQueue from "./PermitQueue.js"

/**
 * The defaults of a provider's circuit breaker and retry budget, and the one rule between their
 * options that no single field's schema checks (a ratio's `minimumCalls` within its `window`):
 * both Effect lines decode the fields with their own schemas, then settle them here.
 *
 * @since 0.4.0
 */
export * as ProviderDefaults from "./ProviderDefaults.js"

/**
 * The sentences of a provider's own refusals (`CallTimeout`, `TotalTimeout`, `CircuitOpen`,
 * `RetryBudgetExhausted`, `ProviderClosed`), built from their fields with durations in
 * milliseconds: both Effect lines' errors take their `message` from here, so that the same refusal
 * prints the same bytes on Effect 3 and Effect 4.
 *
 * @since 0.1.0
 */
export * as ProviderMessages from "./ProviderMessages.js"

/**
 * Pure: imports nothing from Effect, so that a build for another Effect major reuses it unchanged.
 * Header parsers for the limits a server reports: OpenAI, Anthropic, the IETF RateLimit fields and
 * the de facto X-RateLimit-*. Nothing here throws; a value that cannot be read is left out of the
 * observations and returned as a problem naming the header and the value.
 *
 * @since 0.1.0
 */
export * as RateLimitHeaders from "./RateLimitHeaders.js"

/**
 * A provider's run as time series: what it started, waited for, held and got back, per time
 * bucket, and the waits as histograms over the whole run. Off by default (`recording` in the
 * provider's options); read with `provider.recording`, plain data a report renders
 * (`@sluice/report`).
 *
 * Memory is flat on any run length: at most `maxBuckets` buckets per series; when a run outgrows
 * them, neighbouring buckets merge and the bucket doubles (sums add, maxima take the larger), so
 * the whole run stays in view at a coarser step.
 *
 * The recording's data and its recorder live here, shared by both Effect lines; each line's
 * `ProviderRecording` re-exports the data types and decodes its own options.
 *
 * @since 0.4.0
 */
export * as Recording from "./Recording.js"

/**
 * A Redis connection's checks and sentences on plain values: which options it refuses and why (the
 * URL, the Cluster nodes, the client, the timeouts), how a failed command reads, and the timings
 * every connection it opens uses. Both Effect lines' `RedisConnection` take them from here, so that
 * the same mistake prints the same bytes on Effect 3 and Effect 4; each binding unwraps its own
 * `Redacted` and decodes its own `Duration`. `NOSCRIPT` is read by `LimiterCommands.isNoScript`.
 *
 * @since 0.1.0
 */
export * as RedisMessages from "./RedisMessages.js"

/**
 * What a take asks its limiter store, and what a refusal means, on plain numbers: the request of a
 * take's costs, and which reason, limit and cost a refused start names. The bindings build their
 * `RateLimitExceeded` and count it from these.
 *
 * @since 0.1.0
 */
export * as Requests from "./Requests.js"

/**
 * The bound on every wait a server asks for: `Retry-After`'s pause and the resets of its rate-limit
 * headers, in milliseconds. Imports nothing, so that both Effect lines read it unchanged.
 *
 * @since 0.1.0
 */
export * as RetryAfter from "./RetryAfter.js"

/**
 * A retry budget's sliding window on plain numbers: first attempts and retries counted per slice
 * of the window, and how many retries it allows. Times are milliseconds passed in as `now`; the
 * binding owns the clock and the refusal.
 *
 * @since 0.1.0
 */
export * as RetryBudgetState from "./RetryBudgetState.js"

/**
 * Exact summaries of recent calls in bounded memory: the last values of each phase, the start
 * times behind a rate, and the usage reported per dimension.
 *
 * @since 0.1.0
 */
export * as Samples from "./Samples.js"

/**
 * Usage-based limits on the algorithms' state, on plain numbers like `Algorithm`: settling a
 * started reservation to its actual usage, and tightening a limit to what an upstream said. The
 * memory store runs these; the Redis store's scripts transcribe them. Imports nothing from Effect.
 *
 * @since 0.1.0
 */
export * as Settlement from "./Settlement.js"

/**
 * How many permits a bulkhead needs, from Little's law (calls in flight = rate × time in the
 * system), on plain numbers: the figures, their derivation as text, and the message of a bad input.
 * The binding decodes the median latency into milliseconds and carries the refusal as its error.
 *
 * @since 0.1.0
 */
export * as Sizing from "./Sizing.js"

/**
 * The callers of a limiter between their reservation and their start, in the order of their
 * reserved starts (first come first served among equal ones), as a doubly linked list: only its
 * head keeps a timer, so callers that reserve together set one timer at a time. The binding owns
 * the waking; the queue tells it which caller became the head.
 *
 * @since 0.1.0
 */
export * as StartQueue from "./StartQueue.js"

/**
 * Usage-based limits on the limiter's side, on plain numbers: a take's costs per dimension resolved
 * to one cost per limit, the figures a reservation records when it settles or is released, and
 * which limit each observation of an upstream tightens. The bindings keep the metrics, the store
 * calls and the logging; messages are built here so that both lines print the same sentences.
 *
 * @since 0.1.0
 */
export * as Usage from "./Usage.js"

/**
 * The verdict on a provider's recent calls (which bound binds, and why, in one sentence with the
 * numbers), and the figures provider messages print, on milliseconds: both Effect lines write the
 * same sentences, whatever each major's `Duration.format` does.
 *
 * @since 0.1.0
 */
export * as Verdict from "./Verdict.js"
