/**
 * One Redis connection for every Redis structure of sluice in a process (the rate limiter's store,
 * the distributed bulkhead): built from a URL or ioredis options, from Cluster nodes, or wrapping
 * an ioredis `Redis` or `Cluster` the application already has.
 *
 * It runs Lua scripts by `EVALSHA`, sending the text again with `EVAL` on `NOSCRIPT` (a restarted
 * or failed-over node has no script cache), and keeps one subscriber connection for every shard
 * channel (`SSUBSCRIBE`) of the process. A connection it builds never lets a command hang: no
 * offline queue, a command timeout, no resending. On a Cluster, ioredis follows `MOVED` and `ASK`;
 * each structure keeps its keys under one hash tag, so every script touches one slot.
 *
 * @since 2.0.0
 */
export * as RedisConnection from "./RedisConnection.js"
