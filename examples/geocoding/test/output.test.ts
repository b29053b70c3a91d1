/**
 * Resuming from an output file: a row written as failed is not done. Its line is taken out of the
 * file and the row is tried again; the rows written ok or not found are skipped. A query that
 * merely contains the text `"status":"failed"` is not a failed record.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { expect, it } from "vitest"
import * as Output from "../src/Output.js"
import { tempDir } from "./utils.js"

const record = (id: string, status: Output.Status, query = "Paris"): Output.Record => ({
  id,
  query,
  provider: status === "failed" ? null : "photon",
  lat: null,
  lon: null,
  display_name: null,
  status,
  ...(status === "failed" ? { error: "photon: CallTimeout; opencage: CircuitOpen" } : {})
})

it("takes the failed rows out of the file and leaves them to be tried again", async () => {
  const path = Path.join(tempDir(), "out.jsonl")
  const records = [
    record("a", "ok"),
    record("b", "failed"),
    record("c", "not_found", "\"status\":\"failed\""),
    record("d", "failed")
  ]
  Fs.writeFileSync(path, records.map((r) => JSON.stringify(r)).join("\n") + "\n")
  const output = await Output.open(path).pipe(Effect.scoped, Effect.provide(NodeContext.layer), Effect.runPromise)
  expect([...output.done].sort()).toEqual(["a", "c"])
  expect(output.retried).toBe(2)
  const lines = Fs.readFileSync(path, "utf8").split("\n").filter((line) => line !== "")
  expect(lines.map((line) => (JSON.parse(line) as Output.Record).id)).toEqual(["a", "c"])
  expect(Fs.existsSync(`${path}.resume`)).toBe(false)
})
