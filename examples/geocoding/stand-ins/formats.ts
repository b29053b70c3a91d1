/**
 * The response bodies of the real providers, built from gazetteer places: Nominatim's `jsonv2`,
 * Photon's GeoJSON and OpenCage's envelope, with the fields their real answers carry (see their API
 * docs), so that the adapters decode the same shapes offline as online.
 */
import type { City } from "./Gazetteer.js"

export type Format = "nominatim" | "photon" | "opencage"

const countryNames = new Intl.DisplayNames(["en"], { type: "region" })

const countryName = (code: string): string => {
  try {
    return countryNames.of(code) ?? code
  } catch {
    return code
  }
}

const displayName = (city: City): string => `${city.name}, ${countryName(city.country)}`

/** A population-based importance in [0, 1]: a city of 10 million scores 1. */
const importance = (city: City): number => Math.min(1, Math.log10(city.population + 1) / 7)

const placeType = (city: City): string =>
  city.population >= 100_000 ? "city" : city.population >= 10_000 ? "town" : "village"

// GeoNames coordinates carry 5 decimals; these bounding boxes are nominal (±0.1°), as the
// gazetteer has no extents.
const box = (city: City) => {
  const [lon, lat] = city.loc.coordinates
  return { south: lat - 0.1, north: lat + 0.1, west: lon - 0.1, east: lon + 0.1 }
}

export const nominatimLicence = "Data © OpenStreetMap contributors, ODbL 1.0. https://osm.org/copyright"

/** `GET /search?q=…&format=jsonv2`: an array, `lat`/`lon` as strings. */
export const nominatim = (places: ReadonlyArray<City>): ReadonlyArray<unknown> =>
  places.map((city) => {
    const [lon, lat] = city.loc.coordinates
    const b = box(city)
    return {
      place_id: city.cityId,
      licence: nominatimLicence,
      osm_type: "node",
      osm_id: city.cityId,
      lat: lat.toFixed(7),
      lon: lon.toFixed(7),
      category: "place",
      type: placeType(city),
      place_rank: 16,
      importance: importance(city),
      addresstype: placeType(city),
      name: city.name,
      display_name: displayName(city),
      boundingbox: [b.south, b.north, b.west, b.east].map((x) => x.toFixed(7))
    }
  })

/** `GET /api?q=…`: a GeoJSON `FeatureCollection`, coordinates `[lon, lat]`. */
export const photon = (places: ReadonlyArray<City>): unknown => ({
  type: "FeatureCollection",
  features: places.map((city) => {
    const b = box(city)
    return {
      type: "Feature",
      geometry: { type: "Point", coordinates: [city.loc.coordinates[0], city.loc.coordinates[1]] },
      properties: {
        osm_type: "N",
        osm_id: city.cityId,
        osm_key: "place",
        osm_value: placeType(city),
        type: "city",
        name: city.name,
        country: countryName(city.country),
        countrycode: city.country,
        extent: [b.west, b.north, b.east, b.south]
      }
    }
  })
})

export interface OpenCageRate {
  readonly limit: number
  readonly remaining: number
  /** UNIX seconds. */
  readonly reset: number
}

const openCageStatus = (code: number): string =>
  code === 200 ? "OK" : code === 401 ? "invalid API key" : code === 402 ? "quota exceeded" : code === 429
    ? "too many requests"
    : code === 400
    ? "invalid request"
    : "server error"

/** `GET /geocode/v1/json?q=…&key=…`: the envelope; `status.code` mirrors the HTTP status. */
export const opencage = (
  places: ReadonlyArray<City>,
  rate: OpenCageRate | undefined,
  code: number,
  nowMillis: number
): unknown => ({
  documentation: "https://opencagedata.com/api",
  licenses: [{ name: "see attribution guide", url: "https://opencagedata.com/credits" }],
  ...(rate === undefined ? {} : { rate }),
  results: places.map((city) => {
    const [lon, lat] = city.loc.coordinates
    const b = box(city)
    return {
      components: {
        _type: "city",
        _category: "place",
        city: city.name,
        country: countryName(city.country),
        country_code: city.country.toLowerCase()
      },
      confidence: city.population >= 1_000_000 ? 4 : city.population >= 100_000 ? 6 : 8,
      formatted: displayName(city),
      geometry: { lat, lng: lon },
      bounds: { northeast: { lat: b.north, lng: b.east }, southwest: { lat: b.south, lng: b.west } }
    }
  }),
  status: { code, message: openCageStatus(code) },
  stay_informed: { blog: "https://blog.opencagedata.com" },
  thanks: "For using an OpenCage API",
  timestamp: {
    created_http: new Date(nowMillis).toUTCString(),
    created_unix: Math.floor(nowMillis / 1000)
  },
  total_results: places.length
})

/** The error body of each provider for `status`. */
export const errorBody = (format: Format, status: number, message: string, nowMillis: number): unknown =>
  format === "opencage"
    ? opencage([], undefined, status, nowMillis)
    : format === "nominatim"
    ? { error: { code: status, message } }
    : { message }
