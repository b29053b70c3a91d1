// The Effect 3 line's bulkhead messages for the parity table, printed as JSON: parity.test.ts
// runs this with the root's tsx. Effect 3 is loaded from packages/bulkhead's own dependency.
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { table } from "./cases.ts"

const bulkheadDir = join(dirname(fileURLToPath(import.meta.url)), "../../../../../packages/bulkhead")
const effect = dirname(createRequire(join(bulkheadDir, "package.json")).resolve("effect/package.json"))
const [{ Bulkhead }, Duration] = await Promise.all([
  import(pathToFileURL(join(bulkheadDir, "src/index.ts")).href),
  import(pathToFileURL(join(effect, "dist/esm/Duration.js")).href)
])

const shown = (error) => ({ message: error.message, string: String(error) })
const refusal = (options) => {
  try {
    Bulkhead.unsafeMake(options)
    return null
  } catch (defect) {
    return defect.message
  }
}

process.stdout.write(JSON.stringify({
  full: table.full.map((fields) => shown(new Bulkhead.BulkheadFull(fields))),
  timeout: table.timeout.map(({ waitedMillis, ...fields }) =>
    shown(new Bulkhead.PermitWaitTimeout({ ...fields, waited: Duration.millis(waitedMillis) }))
  ),
  refused: table.refused.map(refusal)
}))
