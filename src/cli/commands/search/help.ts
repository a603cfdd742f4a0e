/**
 * SEARCH_HELP is what `kevents search --help` prints after the flags: the query
 * language in brief, with examples (docs/search.md is the reference). The
 * command table imports it, so it imports nothing.
 */
export const SEARCH_HELP = `
Query language (every term must hold; words match whole and in any case):
  word                the word in the message, reason, kind, name, namespace,
                      controller or node
  "a phrase"          the words one after another in one field (checkout-db is
                      the phrase "checkout db")
  -word, -"a phrase"  leaves out what the term matches (also -field:value)
  reason:FailedMount  a field, compared whole, case-insensitive: reason: type:
                      ns: kind: name: node: controller: cluster:; a * at the
                      end matches any rest (name:checkout-db-*); a quoted value
                      is literal (name:"web*")
  since:2h until:30m  when the event last happened: a duration back from now
                      or an RFC 3339 time (since inclusive, until exclusive;
                      --since/--until bound it too)

Examples:
  kevents search x509 -A --since 7d
  kevents search '"back-off restarting failed container"' name:checkout-db-* \\
    -n shop
  kevents search 'reason:FailedMount type:Warning -ns:kube-system' \\
    --cluster prod -A
  kevents search -A 'kind:Node node:worker-3 since:2025-05-27T03:00:00Z' \\
    'until:2025-05-27T04:00:00Z'
  kevents search 'image -controller:kubelet' -A -o wide --limit 0

An exclusion in an argument of its own would be read as a flag (-ns:x as
-n s:x): quote the query as one argument starting with a word, as above, or
give the flags first and the query after -- (kevents search -A -- image
-controller:kubelet).

A query that does not parse is refused with its position (the server answers
400 the same way):
  error: invalid search query at position 6: the quote is never closed

Hits come newest first, read in pages of --chunk-size until --limit (0: every
hit), as kubectl get --chunk-size pages; a line on stderr says when more match.
On a terminal (not with NO_COLOR) the words, phrases and field values the query
matched are shown in bold. -o json and -o yaml print the served SearchResult
with every page's items in one items.
`;
