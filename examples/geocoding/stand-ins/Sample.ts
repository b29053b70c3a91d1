/**
 * The built-in sample of the offline demo: real place names drawn from the gazetteer, as a stream of
 * input rows, so that the demo and the benchmark need no input file.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { Row } from "../src/Input.js"
import { Gazetteer, type SampleOptions } from "./Gazetteer.js"

/** The sample's shape: 5,000 rows over the 20,000 most populous places give ~2,900 distinct queries. */
export const SAMPLE_PLACES = 20_000
export const SAMPLE_SKEW = 0.9

/**
 * Rows the sample draws at a time: the draw and the reader's pass over a chunk hold the event loop
 * without a break, and the first request must not wait for a large one (4,096 rows held it ~30 ms).
 */
const SAMPLE_CHUNK_ROWS = 256

/**
 * The built-in sample: real place names from the gazetteer, with the duplicates real batches have.
 * The places it draws from are loaded when this effect runs (~0.5 s), the rows as they are read.
 */
export const sample = (options: SampleOptions): Effect.Effect<Stream.Stream<Row>, never, Gazetteer> =>
  Effect.flatMap(
    Gazetteer,
    (gazetteer) =>
      Effect.sync(() =>
        Stream.fromIteratorSucceed(gazetteer.sample(options), SAMPLE_CHUNK_ROWS).pipe(
          Stream.zipWithIndex,
          Stream.map(([row, index]): Row => ({ _tag: "Query", line: index + 1, ...row }))
        )
      )
  )
