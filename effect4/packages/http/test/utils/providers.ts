/** Providers the tests share. */
import { Provider } from "@sluice/provider"

/**
 * A provider limited to 100 requests and 1,000 tokens a minute, the tokens in a fixed window so
 * that what the limiter holds is read exactly.
 */
export const tokensPerMinute = (name: string, permits: number) =>
  Provider.make({
    name,
    bulkhead: { permits },
    rateLimiter: {
      limits: [
        { dimension: "requests", limit: 100, window: "1 minute" },
        { dimension: "tokens", limit: 1000, window: "1 minute", algorithm: "fixed-window" }
      ]
    }
  })
