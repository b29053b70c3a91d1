/**
 * The normal form of a place query: what the dedup cache keys on and what the stand-ins index.
 * Two queries that differ only in case, accents, punctuation or spacing ask the same question.
 */

const combiningMarks = /\p{M}+/gu
const separators = /[\s,;]+/g
const punctuation = /[^\p{L}\p{N}\s,;'-]/gu

/** NFD, accents stripped, lower case, punctuation dropped, commas and runs of spaces made one space. */
export const normalize = (query: string): string =>
  query
    .normalize("NFD")
    .replace(combiningMarks, "")
    .toLowerCase()
    .replace(punctuation, "")
    .replace(separators, " ")
    .trim()
