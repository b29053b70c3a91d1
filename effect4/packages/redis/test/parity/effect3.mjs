// The Effect 3 line's Redis connection checks and messages for the parity table, printed as JSON:
// parity.test.ts runs this with the root's tsx. Effect 3 is loaded from packages/redis' own dependency.
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { table } from "./cases.ts"

const redisDir = join(dirname(fileURLToPath(import.meta.url)), "../../../../../packages/redis")
const effect = dirname(createRequire(join(redisDir, "package.json")).resolve("effect/package.json"))
const [{ RedisConnection }, Duration, Redacted, Either, Effect] = await Promise.all([
  import(pathToFileURL(join(redisDir, "src/index.ts")).href),
  import(pathToFileURL(join(effect, "dist/esm/Duration.js")).href),
  import(pathToFileURL(join(effect, "dist/esm/Redacted.js")).href),
  import(pathToFileURL(join(effect, "dist/esm/Either.js")).href),
  import(pathToFileURL(join(effect, "dist/esm/Effect.js")).href)
])

const value = (v) =>
  typeof v === "object" && v !== null && "redacted" in v
    ? Redacted.make(v.redacted)
    : typeof v === "object" && v !== null && "millis" in v
    ? Duration.millis(v.millis)
    : v
const built = (options) => Object.fromEntries(Object.entries(options).map(([k, v]) => [k, value(v)]))
const checked = (options) => {
  const result = RedisConnection.check(built(options))
  return Either.isLeft(result) ? result.left : null
}
const shown = (error) => ({ message: error.message, string: String(error) })

// the port of the server with a password, given by parity.test.ts
const offline = (options) =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(
    RedisConnection.make(built(options)),
    (connection) => Effect.flip(connection.runScript(RedisConnection.script("one", "return 1"), ["k"], []))
  ))).then(shown)
const offlineErrors = []
for (const options of table.offline(Number(process.argv[2]))) offlineErrors.push(await offline(options))

process.stdout.write(JSON.stringify({
  offline: offlineErrors,
  options: table.options.map(checked),
  errors: table.errors.map(({ asError, cause, command }) =>
    shown(new RedisConnection.RedisCommandError({ command, cause: asError ? new Error(cause) : cause }))
  )
}))
