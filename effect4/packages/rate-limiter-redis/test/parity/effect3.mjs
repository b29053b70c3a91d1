// The Effect 3 line's Redis rate limiter store, on the parity table, printed as JSON:
// parity.test.ts runs this with the root's tsx. Effect 3 is loaded from packages/rate-limiter-redis'
// own dependency.
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { requests, storeOptions, unreachable } from "./cases.ts"

const storeDir = join(dirname(fileURLToPath(import.meta.url)), "../../../../../packages/rate-limiter-redis")
const effect = dirname(createRequire(join(storeDir, "package.json")).resolve("effect/package.json"))
const [{ RedisRateLimiterStore }, Effect, Exit, Cause, Logger] = await Promise.all([
  import(pathToFileURL(join(storeDir, "src/index.ts")).href),
  import(pathToFileURL(join(effect, "dist/esm/Effect.js")).href),
  import(pathToFileURL(join(effect, "dist/esm/Exit.js")).href),
  import(pathToFileURL(join(effect, "dist/esm/Cause.js")).href),
  import(pathToFileURL(join(effect, "dist/esm/Logger.js")).href)
])

// the store's log lines, kept off stdout (the JSON's) and compared too
const logs = []
const capturing = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ message }) => logs.push(Array.isArray(message) ? message.join(" ") : String(message)))
)

const refusal = async (options) => {
  const exit = await Effect.runPromiseExit(
    Effect.scoped(RedisRateLimiterStore.make(options)).pipe(Effect.provide(capturing))
  )
  return Exit.isSuccess(exit) ? null : String(Cause.squash(exit.cause).message)
}

const options = []
for (const o of storeOptions) options.push(await refusal(o))

const failures = await Effect.runPromise(
  Effect.scoped(Effect.gen(function*() {
    const store = yield* RedisRateLimiterStore.make(unreachable)
    const shown = (error) => ({ message: error.message, string: String(error) })
    return [
      shown(yield* Effect.flip(store.reserve(requests))),
      shown(yield* Effect.flip(store.pause(requests.key, 1000))),
      shown(yield* Effect.flip(store.readPause(requests.key)))
    ]
  })).pipe(Effect.provide(capturing))
)

process.stdout.write(JSON.stringify({ options, failures, logs }))
