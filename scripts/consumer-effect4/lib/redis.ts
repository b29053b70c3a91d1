// A library built on @sluice/redis: its connection layer, a script of its own and its failure,
// inferred rather than annotated.
import { RedisConnection } from "@sluice/redis"
import { Config, Effect } from "effect"

export const connection = (url: string) => RedisConnection.layer({ url })

export const connectionFromConfig = RedisConnection.layerConfig(Config.nested(RedisConnection.config, "REDIS"))

export const incr = RedisConnection.script("incr", "return redis.call('INCRBY', KEYS[1], ARGV[1])")

/** Runs the script, its failure in the error channel. */
export const increment = (key: string, by: number) =>
  Effect.flatMap(RedisConnection.RedisConnection, (redis) => redis.runScript(incr, [key], [String(by)]))

/** The command failure, narrowed with `instanceof`. */
export const commandFailed = <E>(error: E) => error instanceof RedisConnection.RedisCommandError ? error : undefined
