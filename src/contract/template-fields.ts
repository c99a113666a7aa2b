/**
 * Template text rules of the contract (spec 2.2, 2.3): the per-contact check of
 * `template_variables` against the template type, and the derivation of the fields the spec marks
 * "under implementation" (`data`, `example`, `variables`) from a template text and sample values.
 *
 * Every template of a type has the same number of placeholders (the fleet validator guarantees it),
 * so a contact is checked once against the type, whichever template the engine later picks.
 */
import type { FieldCheck } from './check.js';
import { scanPlaceholders } from '../core/template-text.js';
import { templateFields, templateTypeFields, type TemplateFields, type TemplateTypeFields } from '../core/template-fields.js';

// The derived fields are the engine's types: one name for `{ data, example, variables }` in every
// entry (`TemplateDescription` is the fleet's template, in `sendpool`).
export type { TemplateFields, TemplateTypeFields } from '../core/template-fields.js';

const PLACEHOLDER = /\{\{\s*\d+\s*\}\}/;
const NON_SPACE = /\S/;

/** Why one value of `template_variables` cannot be used, or `undefined` when it can. */
export function checkVariableValue(value: string): string | undefined {
  const first = value.charCodeAt(0);
  // Most values start with a visible ASCII character: skip the regex for them.
  if (!(first > 0x20 && first < 0x7f) && !NON_SPACE.test(value)) return 'a non-empty value (not only spaces)';
  // A value holding "{{2}}" would survive rendering as a placeholder in the sent text.
  if (value.includes('{{') && PLACEHOLDER.test(value)) return 'a value without {{n}} placeholders';
  return undefined;
}

/** Why a list of values does not fit a type with `placeholders` placeholders, or `undefined`. */
export function checkVariableCount(count: number, placeholders: number): string | undefined {
  if (count === placeholders) return undefined;
  if (placeholders === 0) return 'no template_variables (the template type has no placeholders)';
  return `exactly ${placeholders} template_variables, one per placeholder {{1}}..{{${placeholders}}}`;
}

/** Names and samples for {@link describeTemplate}. */
export interface DescribeTemplateOptions {
  /** Name of placeholder `{{k}}` at `names[k - 1]`. @default "{{k}}" */
  readonly names?: readonly string[];
  /** Sample value of placeholder `{{k}}` at `samples[k - 1]`. @default `[name]` of the placeholder */
  readonly samples?: readonly string[];
}

/**
 * Derives `data`, `example` and `variables` of a template from its text: `"Hi {{1}}, {{2}} is due"`
 * with samples `["Ana", "R$ 10"]` gives example `"Hi Ana, R$ 10 is due"` and variables
 * `[{ name: "{{1}}", index: 0 }, { name: "{{2}}", index: 1 }]`. The engine derives the fields of
 * GET /messenger/businesses/ the same way from the fleet.
 */
export function describeTemplate(text: string, options: DescribeTemplateOptions = {}): FieldCheck<TemplateFields> {
  const scan = scanPlaceholders(text);
  if (!scan.ok) return { ok: false, expected: scan.expected };
  // A sample that could not be sent (blank, holding a placeholder) is shown as [name] instead.
  const samples = options.samples?.map((s) => (checkVariableValue(s) === undefined ? s : undefined));
  return { ok: true, value: templateFields({ text, ...(options.names ? { names: options.names } : {}), ...(samples ? { samples } : {}) }) };
}

/** Derives `data`, `example`, `variables` of a template type from the texts of its templates. */
export function describeTemplateType(texts: readonly string[], options: DescribeTemplateOptions = {}): FieldCheck<TemplateTypeFields> {
  const described: TemplateFields[] = [];
  for (const text of texts) {
    const one = describeTemplate(text, options);
    if (!one.ok) return one;
    described.push(one.value);
  }
  const fields = templateTypeFields(described);
  return fields === undefined ? { ok: false, expected: 'at least one template text' } : { ok: true, value: fields };
}
