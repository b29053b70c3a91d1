/**
 * The Redis store's steps on plain values: which script each request runs and with which
 * arguments, what needs no command, and what each store-down policy answers when Redis fails.
 */
import { assert, describe, it } from "vitest"
import type { LimitSpec } from "../src/Algorithm.js"
import * as LimiterOperations from "../src/LimiterOperations.js"

const gcra: ReadonlyArray<LimitSpec> = [{ algorithm: "gcra", limit: 10, windowMillis: 1_000, burst: 4 }]
const windows: ReadonlyArray<LimitSpec> = [
  { algorithm: "fixed-window", limit: 10, windowMillis: 1_000, burst: 10 },
  { algorithm: "sliding-window", limit: 100, windowMillis: 60_000, burst: 100 }
]

const policies = new Map<string, LimiterOperations.Policy>([
  ["open", { storeDown: "fail-open", localShare: 1 }],
  ["half", { storeDown: "local", localShare: 0.5 }]
])

/** The operations under `p:`, on a clock the test sets. */
const make = () => {
  const clock = { now: 1_000 }
  const operations = LimiterOperations.make(
    { prefix: "p:", defaultPolicy: { storeDown: "fail-closed", localShare: 1 }, policies },
    "0",
    () => clock.now
  )
  return { clock, operations }
}

const callOf = <A>(step: LimiterOperations.Step<A>): LimiterOperations.Call<A> => {
  assert.strictEqual(step._tag, "Call")
  return step as LimiterOperations.Call<A>
}

const localOf = <A>(step: LimiterOperations.Step<A>): LimiterOperations.Local<A> => {
  assert.strictEqual(step._tag, "Local")
  return step as LimiterOperations.Local<A>
}

const answerOf = <A>(down: LimiterOperations.Down<A>): A => {
  assert.strictEqual(down._tag, "Answer")
  return (down as Extract<LimiterOperations.Down<A>, { readonly _tag: "Answer" }>).value
}

describe("LimiterOperations", () => {
  it("a single GCRA limit takes the fast script, with its increments; a zero cost the general one", () => {
    const { operations } = make()
    const fast = callOf(operations.reserve({ key: "k", limits: gcra, cost: 2, maxWaitMillis: Infinity }))
    assert.strictEqual(fast.script, "reserveGcra")
    assert.strictEqual(fast.keyCount, 1)
    // slack (cost - burst) × interval, advance cost × interval, on an interval of 100 ms
    assert.deepStrictEqual(fast.args("1500.25"), ["p:{k}:v2", "1500.25", "0", "-1", "g:10:1000:4", "-200", "200"])

    const free = callOf(operations.reserve({ key: "k", limits: gcra, cost: 0, maxWaitMillis: 50 }))
    assert.strictEqual(free.script, "reserve")
    assert.deepStrictEqual(free.args(""), [
      "p:{k}:v2",
      "p:{k}:v2:log:1",
      "",
      "0",
      "50",
      "1",
      "g",
      "10",
      "1000",
      "4",
      "g:10:1000:4",
      "0"
    ])
  })

  it("several limits: every key first, then the limits and each one's cost", () => {
    const { operations } = make()
    const call = callOf(operations.reserve({ key: "k", limits: windows, cost: 3, costs: [3, 1], maxWaitMillis: 0 }))
    assert.strictEqual(call.script, "reserve")
    assert.strictEqual(call.keyCount, 3)
    assert.deepStrictEqual(call.args(""), [
      "p:{k}:v2",
      "p:{k}:v2:log:1",
      "p:{k}:v2:log:2",
      "",
      "0",
      "0",
      "2",
      "f",
      "10",
      "1000",
      "10",
      "f:10:1000:10",
      "s",
      "100",
      "60000",
      "100",
      "s:100:60000:100",
      "3",
      "1"
    ])
  })

  it("a refund counts the cancelled runs' key among its keys; of reservation 0 it asks nothing", () => {
    const { operations } = make()
    const call = callOf(
      operations.refund({ key: "k", limits: gcra, cost: 1, reservation: 7, restore: [5, 0, 1] })
    )
    assert.strictEqual(call.keyCount, 3)
    assert.deepStrictEqual(call.args("").slice(0, 6), [
      "p:{k}:v2",
      "p:{k}:v2:log:1",
      "p:{k}:v2:cancelled",
      "",
      "0",
      "7"
    ])
    assert.deepStrictEqual(call.args("").slice(-4), ["1", "5", "0", "1"])
    assert.strictEqual(localOf(operations.refund({ key: "k", limits: gcra, cost: 1, reservation: 0 })).run(), false)
    assert.strictEqual(
      localOf(operations.settle({ key: "k", limits: gcra, reservation: 0, reserved: [1], actual: [3] })).run(),
      undefined
    )
  })

  it("fail-closed: the command's message, naming the limiter that fails closed", () => {
    const { operations } = make()
    const down = callOf(operations.readPause("k")).down("store: readPause of \"k\" failed: down")
    assert.deepStrictEqual(down, {
      _tag: "FailClosed",
      message: "store: readPause of \"k\" failed: down (limiter \"k\" fails closed while Redis is unreachable)"
    })
  })

  it("fail-open: an unlimited start, unless a pause this process learned outlasts the wait", () => {
    const { clock, operations } = make()
    const take = { key: "open", limits: gcra, cost: 1, maxWaitMillis: 500 }
    assert.deepStrictEqual(answerOf(callOf(operations.reserve(take)).down("down")), {
      _tag: "Reserved",
      delayMillis: 0,
      reservation: 0,
      pausedMillis: 0,
      unlimited: true
    })
    // the pause is kept locally when its command is sent
    const pause = callOf(operations.pause("open", 2_000))
    assert.deepStrictEqual(pause.args(""), ["p:{open}:v2", "", "0", "2000"])
    pause.first?.()
    clock.now += 1_000
    assert.deepStrictEqual(answerOf(callOf(operations.reserve(take)).down("down")), {
      _tag: "Refused",
      delayMillis: 1_000,
      retryAfterMillis: 500,
      binding: -1
    })
    assert.strictEqual(answerOf(callOf(operations.readPause("open")).down("down")), 1_000)
    assert.strictEqual(answerOf(callOf(operations.refund({ ...take, reservation: 3 })).down("down")), false)
  })

  it("local: the share of the quota, decided here with negative ids that refund and settle here", () => {
    const { operations } = make()
    // half of a burst of 4: two start at once, the third waits an interval of 200 ms
    const take = { key: "half", limits: gcra, cost: 1, maxWaitMillis: 1_000 }
    const answers = [0, 1, 2].map(() => answerOf(callOf(operations.reserve(take)).down("down")))
    assert.deepStrictEqual(answers.map((a) => a._tag === "Reserved" ? [a.delayMillis, a.reservation] : a), [
      [0, -1],
      [0, -2],
      [200, -3]
    ])
    const latest = answers[2]
    assert(latest._tag === "Reserved")
    const refund = localOf(
      operations.refund({ ...take, reservation: latest.reservation, restore: latest.restore })
    )
    assert.strictEqual(refund.run(), true)
    // its slot came back: the next waits as the third did
    const again = answerOf(callOf(operations.reserve(take)).down("down"))
    assert.deepStrictEqual(again._tag === "Reserved" ? [again.delayMillis, again.reservation] : again, [200, -4])
  })

  it("tighten: ignored observations are a warning; with none usable, nothing is sent", () => {
    const { operations } = make()
    const request = { key: "k", limits: gcra }
    const none = localOf(operations.tighten(request, { usable: [], ignored: "tighten of \"k\" ignored 9" }))
    assert.strictEqual(none.warning, "Redis rate limiter store \"p:\": tighten of \"k\" ignored 9")
    const call = callOf(
      operations.tighten(request, { usable: [{ limit: 0, remaining: 2, resetAfterMillis: 30 }], ignored: undefined })
    )
    assert.strictEqual(call.warning, undefined)
    assert.deepStrictEqual(call.args("").slice(-3), ["0", "2", "30"])
  })
})
