// The Effect 3 line's fleet bulkhead: its option resolution and store errors for the parity
// table, printed as JSON: parity.test.ts runs this with the root's tsx. Effect 3 is loaded from
// packages/bulkhead-redis' own dependency.
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { table } from "./cases.ts"

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "../../../../../packages/bulkhead-redis")
const effect = dirname(createRequire(join(packageDir, "package.json")).resolve("effect/package.json"))
const [{ RedisBulkhead }, { resolve }, Duration] = await Promise.all([
  import(pathToFileURL(join(packageDir, "src/index.ts")).href),
  import(pathToFileURL(join(packageDir, "src/internal/settings.ts")).href),
  import(pathToFileURL(join(effect, "dist/esm/Duration.js")).href)
])

const value = (v) => typeof v === "object" && v !== null && "millis" in v ? Duration.millis(v.millis) : v
const resolved = (options) => {
  try {
    const s = resolve(Object.fromEntries(Object.entries(options).map(([k, v]) => [k, value(v)])))
    return {
      permits: s.permits,
      maxPermits: s.maxPermits,
      maxWaiting: String(s.maxWaiting),
      maxWaitMillis: String(Duration.toMillis(s.maxWait)),
      leaseTtlMillis: s.leaseTtlMillis,
      onLeaseLost: s.onLeaseLost,
      storeDown: s.storeDown,
      localShare: s.localShare,
      prefix: s.prefix
    }
  } catch (error) {
    return { refused: String(error.message) }
  }
}
const shown = (error) => ({ message: error.message, string: String(error) })

process.stdout.write(JSON.stringify({
  options: table.options.map(resolved),
  errors: table.errors.map(({ asError, cause, operation, policy }) =>
    shown(
      new RedisBulkhead.BulkheadStoreError({
        bulkhead: "geo",
        operation,
        cause: asError ? new Error(cause) : cause,
        policy
      })
    )
  )
}))
