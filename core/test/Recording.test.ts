import { describe, expect, it } from "vitest"
import { perSecond, Recorder } from "../src/Recording.js"

describe("Recording.Recorder", () => {
  it("records starts and outcomes per bucket, and merges neighbours when the run outgrows its buckets", () => {
    const recorder = new Recorder(1000, 4, [])
    for (const at of [0, 500, 1500, 2500, 3500]) {
      recorder.queued(at, 1)
      recorder.granted(at, 0, 1)
      recorder.started(at, 1)
      recorder.called(at + 10, 10)
      recorder.released(at + 10, 1)
      recorder.ended(at + 10, "success")
    }
    const early = recorder.snapshot(3510, "geo", 2, undefined, [])
    expect(early.bucketMillis).toBe(1000)
    expect(early.starts).toEqual([2, 1, 1, 1])
    expect(early.outcomes.success).toEqual([2, 1, 1, 1])
    expect(perSecond(early, early.starts)).toEqual([2, 1, 1, 1])
    // a fifth second: the buckets double, sums add
    recorder.queued(4500, 1)
    recorder.granted(4500, 0, 1)
    recorder.started(4500, 1)
    recorder.called(4510, 10)
    recorder.released(4510, 1)
    recorder.ended(4510, "call_error")
    const late = recorder.snapshot(4510, "geo", 2, undefined, [])
    expect(late.bucketMillis).toBe(2000)
    expect(late.starts).toEqual([3, 2, 1])
    expect(late.outcomes.call_error).toEqual([0, 0, 1])
    expect(late.callTime.count).toEqual([3, 2, 1])
    expect(late.histograms.callTime.counts.reduce((a, b) => a + b, 0)).toBe(6)
  })
})
