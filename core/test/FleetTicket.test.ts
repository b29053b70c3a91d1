/** The fleet ticket's formats, its wake, the lease arithmetic, the reply decoding and its sentences. */
import { describe, expect, it } from "vitest"
import * as M from "../src/FleetMessages.js"
import * as S from "../src/FleetScripts.js"
import * as T from "../src/FleetTicket.js"

describe("FleetTicket", () => {
  it("marks count per instance after the random part; nonces start with the mark", () => {
    const next = T.marks("ab12")
    expect([next(), next(), next()]).toEqual(["ab120", "ab121", "ab122"])
    const a = T.make("ab120", 2)
    const b = T.make("ab120", 1)
    expect(a.nonce.startsWith("ab120.")).toBe(true)
    expect(a.nonce).not.toBe(b.nonce)
    expect(a.state).toBe(T.ASKING)
  })

  it("a member is read back: its number and its nonce", () => {
    expect(T.numberOf({ member: "42:3:10000:ab.1" })).toBe(42)
    expect(T.numberOf({ member: "" })).toBeNaN()
    expect(T.nonceOf("42:3:10000:ab.1")).toBe("ab.1")
    expect(T.fallbackMember(3, 10000, "ab.1")).toBe("c:3:10000:ab.1")
    expect(T.nonceOf(T.fallbackMember(3, 10000, "ab.1"))).toBe("ab.1")
  })

  it("the first wake stands, and resumes the waiter once", () => {
    const ticket = T.make<never, never>("m", 1)
    const seen: Array<boolean> = []
    ticket.resume = (granted) => seen.push(granted)
    T.wake(ticket, false)
    T.wake(ticket, true)
    expect(seen).toEqual([false])
    expect(ticket.outcome).toBe(false)
    expect(ticket.resume).toBeUndefined()
  })

  it("lease arithmetic: a third, two thirds, the fallback's share, the bounds", () => {
    expect(T.renewEveryMillis(10_000)).toBe(3333)
    expect(T.freshMillis(10_000)).toBe(6666)
    expect(T.fallbackPermits(10, 0.3)).toBe(3)
    expect(T.fallbackPermits(10, 0.01)).toBe(1)
    expect(T.fallbackPermits(3, 1 / 3)).toBe(1)
    expect([T.isLeaseTtl(299), T.isLeaseTtl(300), T.isLeaseTtl(3_600_000), T.isLeaseTtl(3_600_001)])
      .toEqual([false, true, true, false])
    expect(T.maxWaitingArg(Infinity)).toBe("-1")
    expect(T.acquireArg(2)).toBe("2")
    expect(T.acquireArg(2, { name: "bulk", maxWaitingArg: "5" })).toBe("2 5 bulk")
  })

  it("replies: stats, lanes, a count over K, grant messages", () => {
    expect(T.statsOf([4, "3", 2, 1, 5])).toEqual({ permits: 4, inFlight: 3, holders: 2, waiting: 1, waitingPermits: 5 })
    expect(T.lanesOf([["fast", 1, 2, 3], "junk"])).toEqual([{
      name: "fast",
      waiting: 1,
      waitingPermits: 2,
      granted: 3
    }])
    expect(T.lanesOf(undefined)).toEqual([])
    expect(T.overK(S.ACQUIRE, [S.ACQUIRE_GRANTED, "m", 5, 4])).toBe(true)
    expect(T.overK(S.RELEASE, [0, 3, 4])).toBe(false)
    expect(T.overK(S.RELEASE, "OK")).toBeUndefined()
    expect(T.grantsOf("17 3:1:300:a.1 4:1:300:a.2")).toEqual({ limit: 17, members: ["3:1:300:a.1", "4:1:300:a.2"] })
  })
})

describe("FleetMessages", () => {
  it("the store error names the bulkhead, the operation, the cause, and fail-closed", () => {
    expect(M.storeError({ bulkhead: "geo", operation: "acquire", cause: new Error("timeout"), policy: "fail-closed" }))
      .toBe(`bulkhead "geo": Redis did not answer its acquire (timeout); it fails closed while Redis is unreachable`)
    expect(M.storeError({ bulkhead: "geo", operation: "renew", cause: "down", policy: "local" }))
      .toBe(`bulkhead "geo": Redis did not answer its renew (down)`)
  })

  it("the logs carry the numbers, in the singular for one", () => {
    expect(M.wentDown("E", { permits: 1, storeDown: "local", fleetPermits: 4 }))
      .toBe(`E: calls run on a local bulkhead of 1 permit (storeDown "local", of K = 4) until Redis answers again`)
    expect(
      M.leaseLost({ bulkhead: "geo", member: "7:2:300:a.1", cost: 2, why: "w", fleetPermits: 4, interrupting: true })
    )
      .toBe(
        `bulkhead "geo": the lease of ticket 7:2:300:a.1 (2 permits) was lost: w; its permits may be held by another ` +
          `call, so the fleet may exceed 4 permits until this call ends (interrupting it)`
      )
    expect(M.renewedLate(400, 300)).toBe("renewed last 400ms ago, past its TTL of 300ms")
    expect(M.noLane("geo", 3, ["a", "b"])).toBe(`bulkhead "geo": no lane 3 (its lanes: a, b)`)
    expect(M.badName("a{b}")).toBe(`a Redis bulkhead needs a non-empty name without braces, got "a{b}"`)
  })
})
