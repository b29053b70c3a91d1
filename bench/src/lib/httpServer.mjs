// The loopback server of `pnpm bench http`, in a process of its own so that it never shares an
// event loop with the client being measured. GET /r?delay=MS answers a small JSON body after MS
// milliseconds. Prints its URL on stdout once listening; exits when its stdin closes.
import * as http from "node:http"

const body = JSON.stringify([{ lat: "45.7578", lon: "4.8320", display_name: "Lyon, France" }])

const server = http.createServer((req, res) => {
  const delay = Number(new URL(req.url ?? "/", "http://x").searchParams.get("delay") ?? 0)
  const reply = () => {
    res.setHeader("content-type", "application/json")
    res.end(body)
  }
  if (delay > 0) setTimeout(reply, delay)
  else reply()
})
server.keepAliveTimeout = 60_000
server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  process.stdout.write(`http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}\n`)
})
process.stdin.resume()
process.stdin.on("end", () => server.close(() => process.exit(0)))
