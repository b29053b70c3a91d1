/**
 * Moved to `@sluice/redis`'s test utilities (every Redis package's tests start servers with it);
 * this path stays for the tests, bench and examples that import it.
 */
export * from "../../../redis/test/utils/redisServer.js"
