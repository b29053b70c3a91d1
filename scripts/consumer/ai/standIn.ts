// Loopback stand-ins for OpenAI's Responses API and Anthropic's Messages API: each answers a
// fixed text with the usage the real API would report, and counts the requests it served.
import { Effect, type Scope } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface StandIn {
  readonly url: string
  readonly requests: () => number
}

const response = (model: string) => ({
  id: "resp_stand_in",
  object: "response",
  created_at: 0,
  status: "completed",
  error: null,
  incomplete_details: null,
  instructions: null,
  model,
  output: [{
    id: "msg_stand_in",
    type: "message",
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text: "Hello from the stand-in", annotations: [] }]
  }],
  parallel_tool_calls: true,
  tools: [],
  tool_choice: "auto",
  metadata: null,
  temperature: 1,
  top_p: 1,
  usage: {
    input_tokens: 12,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 5,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 17
  }
})

const message = (model: string) => ({
  id: "msg_stand_in",
  type: "message",
  role: "assistant",
  model,
  content: [{ type: "text", text: "Hello from the stand-in" }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 12, output_tokens: 5 }
})

/** A stand-in on 127.0.0.1 for the scope. */
export const standIn: Effect.Effect<StandIn, never, Scope.Scope> = Effect.acquireRelease(
  Effect.async<{ readonly server: http.Server; readonly state: { requests: number } }>((resume) => {
    const state = { requests: 0 }
    const server = http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        state.requests++
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as { readonly model?: string }
        const path = (req.url ?? "/").split("?")[0]
        const answer = path === "/v1/responses"
          ? response(body.model ?? "gpt-4o-mini")
          : path === "/v1/messages"
          ? message(body.model ?? "claude-sonnet-4-5")
          : undefined
        res.statusCode = answer === undefined ? 404 : 200
        res.setHeader("content-type", "application/json")
        res.end(JSON.stringify(answer ?? { error: `no route ${path}` }))
      })
    })
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ server, state })))
  }),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.close(() => resume(Effect.void))
    })
).pipe(Effect.map(({ server, state }) => ({
  url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
  requests: () => state.requests
})))

/** Fails the app, naming what was expected. */
export const check = (ok: boolean, what: string): Effect.Effect<void, Error> =>
  ok ? Effect.log(`ok: ${what}`) : Effect.fail(new Error(`consumer: ${what}`))

/** Runs an app's program with plain node: exit code 0, or 1 with the failure. */
export const main = (program: Effect.Effect<void, unknown>): void => {
  Effect.runPromise(program).then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`${String(error)}\n`)
      process.exit(1)
    }
  )
}
