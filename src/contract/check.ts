/** The answer of a field rule: the normalised value, or what was expected instead. */
export type FieldCheck<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly expected: string };

/**
 * The answer of a parser: the typed value, or the problems found (never thrown). A long list is
 * capped: the first `MAX_PROBLEMS_LISTED`, then one problem counting the rest (`problemTotal`).
 */
export type ParseResult<T, P> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problems: readonly P[] };
