/**
 * WORD is what the search takes as a word: a run of letters, digits and marks
 * (the Unicode classes L, N and M). Everything else (spaces, punctuation, `-`,
 * `_`, `.`, `/`, `:`) separates words, as SQLite's unicode61 tokenizer
 * separates them, so `checkout-db-0` is the words `checkout`, `db`, `0` and the
 * term `checkout-db` finds it as a phrase.
 */
const WORD = /[\p{L}\p{N}\p{M}]+/gu;
/** ASCII_WORD is WORD on ASCII text, which most event text is: the same words, several times faster to find. */
const ASCII_WORD = /[a-z0-9]+/g;
const ASCII = /^[\x00-\x7f]*$/;

/** searchWords splits text into its lowercased words, in order. */
export function searchWords(text: string): string[] {
  const lower = text.toLowerCase();
  return lower.match(ASCII.test(lower) ? ASCII_WORD : WORD) ?? [];
}
