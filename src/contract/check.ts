/** The answer of a field rule: the normalised value, or what was expected instead. */
export type FieldCheck<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly expected: string };

/** The answer of a parser: the typed value, or every problem found (never thrown). */
export type ParseResult<T, P> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problems: readonly P[] };
