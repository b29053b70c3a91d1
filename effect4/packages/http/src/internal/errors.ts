/**
 * The errors, declared in the public module `HttpError` so that declarations built on them name a
 * public path.
 *
 * @internal
 */
export * from "../HttpError.js"
